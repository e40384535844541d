import { sqlState } from './pool.ts';

/**
 * Conditions a statement checks for itself with `fail_unless` (migrations/0009-fail-unless.sql),
 * each with its own SQLSTATE (class PW, which PostgreSQL does not use). A transaction that sends
 * COMMIT with its statements (withOneRoundTrip, pool.ts) depends on them: an unmet one fails the
 * statement, PostgreSQL skips the rest of the round trip, and nothing commits.
 */
export const CHECKS = {
  /** INSERT_KEY admitted nothing: another request holds the key (or took it first). */
  admissionLost: { sqlstate: 'PW001', message: 'not admitted: another request holds the key' },
  /** ADVANCE_KEY or FINISH_KEY matched no row: the token is no longer ours, or the point moved. */
  fenceLost: { sqlstate: 'PW002', message: 'fenced out: the request is no longer ours' },
  /** The payment was no longer PROCESSING when its charge outcome was recorded. */
  paymentNotProcessing: {
    sqlstate: 'PW003',
    message: 'the payment left PROCESSING before its outcome',
  },
} as const;

export type Check = (typeof CHECKS)[keyof typeof CHECKS];

/** SQL that is true when `condition` holds and otherwise fails the statement with `check`. */
export function failUnless(condition: string, check: Check): string {
  return `fail_unless(${condition}, '${check.sqlstate}', '${check.message}')`;
}

/** Whether `error` is PostgreSQL reporting that `check` failed. */
export function isFailedCheck(error: unknown, check: Check): boolean {
  return sqlState(error) === check.sqlstate;
}
