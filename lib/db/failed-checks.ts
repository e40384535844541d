import { sqlState } from './sql-state.ts';

/**
 * A condition a statement checks for itself with `fail_unless` (migrations/0009-fail-unless.sql),
 * with its own SQLSTATE in class PW, which PostgreSQL does not use. A transaction that commits
 * in the round trip of its statements (withOneRoundTrip, pool.ts) depends on them: an unmet one
 * fails the statement, PostgreSQL skips the rest of the round trip, and nothing commits. Each owner
 * defines its own (a service beside its SQL); lib's are the engine's, PW001 to PW099.
 */
export interface Check {
  readonly sqlstate: `PW${string}`;
  readonly message: string;
}

/** The idempotency engine's checks. */
export const CHECKS = {
  /** INSERT_KEY admitted nothing: another request holds the key (or took it first). */
  admissionLost: { sqlstate: 'PW001', message: 'not admitted: another request holds the key' },
  /** ADVANCE_KEY or FINISH_KEY matched no row: the token is no longer ours, or the point moved. */
  fenceLost: { sqlstate: 'PW002', message: 'fenced out: the request is no longer ours' },
} as const satisfies Record<string, Check>;

/** SQL that is true when `condition` holds and otherwise fails the statement with `check`. */
export function failUnless(condition: string, check: Check): string {
  return `fail_unless(${condition}, '${check.sqlstate}', '${check.message}')`;
}

/** Whether `error` is PostgreSQL reporting that `check` failed. */
export function isFailedCheck(error: unknown, check: Check): boolean {
  return sqlState(error) === check.sqlstate;
}
