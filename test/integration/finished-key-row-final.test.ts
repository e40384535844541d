import { describe, expect, it } from 'vitest';
import { CHECKS, isFailedCheck } from '../../lib/db/failed-checks.ts';
import * as keyStatements from '../../lib/idempotency/idempotency.sql.ts';
import * as retentionStatements from '../../lib/idempotency/retention.sql.ts';
import { createPaymentOn, paymentInput, useTestStack } from '../support/test-stack.ts';

const stack = useTestStack('finished-key-row-final');

interface FinishedRow {
  id: string;
  tenant_id: string;
  operation: string;
  key: string;
  fencing_token: string;
  recovery_point: string;
  expires_at: Date;
}

/**
 * Each statement that updates key rows, with the parameters that name the finished row as
 * closely as the statement lets a caller name it: its own id, token, point and expiry.
 */
const ATTEMPTS: Record<string, (row: FinishedRow, partition: string) => unknown[]> = {
  FINISH_AT_ADMISSION: (r) => [r.tenant_id, r.operation, r.key, '{}', 1, 'inline', 'again'],
  TAKE_OVER_KEY: (r) => [r.tenant_id, r.operation, r.key, r.fencing_token, 30_000],
  ADVANCE_KEY: (r) => [
    r.tenant_id,
    r.operation,
    r.key,
    r.fencing_token,
    r.recovery_point,
    'after_finish',
    30_000,
    r.id,
    r.expires_at,
  ],
  FINISH_KEY: (r) => [
    r.tenant_id,
    r.operation,
    r.key,
    r.fencing_token,
    r.recovery_point,
    '{}',
    1,
    'inline',
    'again',
    86_400,
    r.id,
    r.expires_at,
  ],
  HEARTBEAT_KEY: (r) => [
    r.tenant_id,
    r.operation,
    r.key,
    r.fencing_token,
    30_000,
    r.id,
    r.expires_at,
  ],
  MARK_WAITING: (r) => [r.tenant_id, r.operation, r.key, r.id, r.fencing_token],
  RELEASE_KEY: (r) => [
    r.tenant_id,
    r.operation,
    r.key,
    r.fencing_token,
    'timeout',
    3,
    100,
    1_000,
    r.id,
    r.expires_at,
  ],
  CLAIM_KEY: (r) => [r.tenant_id, [r.operation], r.key, r.fencing_token, 30_000],
  CLAIM_STALE_KEYS: (r) => [30_000, 100, [r.operation]],
  MOVE_UNFINISHED_KEYS: (_r, partition) => [partition, 86_400],
};

/** The names of the exported statements that update key rows. */
function statementsUpdatingKeys(): Map<string, string> {
  const all = { ...keyStatements, ...retentionStatements } as Record<string, unknown>;
  return new Map(
    Object.entries(all).filter(
      (entry): entry is [string, string] =>
        typeof entry[1] === 'string' && /UPDATE\s+idempotency_keys\b/.test(entry[1]),
    ),
  );
}

/**
 * A finished key row is final (ADR 0054): its token is the finishing owner's and its updated_at
 * is when it finished, so the finish needs no phase-log row of its own. That holds only while
 * no statement ever updates a finished row. Every statement that updates key rows is tried
 * here against one, with that row's own parameters; a new such statement fails the first test
 * until it is added to the second.
 */
describe('a finished key row', () => {
  it('is covered for every statement that updates key rows', () => {
    expect([...statementsUpdatingKeys().keys()].sort()).toEqual(Object.keys(ATTEMPTS).sort());
  });

  it('is left untouched by each of them', async () => {
    const answer = await createPaymentOn(stack, paymentInput('final-row'));
    expect(answer.body.errors).toBeUndefined();
    const { rows } = await stack.db.query<FinishedRow & { partition: string }>(
      `SELECT k.id, k.tenant_id, k.operation, k.key, k.fencing_token::text, k.recovery_point,
              k.expires_at, k.tableoid::regclass::text AS partition
         FROM idempotency_keys k WHERE k.key = 'final-row' AND k.state = 'finished'`,
    );
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    const snapshot = async () =>
      (
        await stack.db.query<{ xmin: string; row: unknown }>(
          'SELECT xmin::text, to_jsonb(k) AS row FROM idempotency_keys k WHERE id = $1',
          [row.id],
        )
      ).rows;
    const before = await snapshot();

    for (const [name, sql] of statementsUpdatingKeys()) {
      const params = ATTEMPTS[name]!(row, row.partition);
      // A fenced statement refuses as fenced out; every other one runs and updates nothing. Any
      // other error (a parameter of the wrong type) would prove nothing, so it fails the test.
      const refusal = await stack.db.query(sql, params).then(
        () => null,
        (error: unknown) => error,
      );
      if (refusal !== null) {
        expect({ name, fencedOut: isFailedCheck(refusal, CHECKS.fenceLost) }).toEqual({
          name,
          fencedOut: true,
        });
      }
      expect({ name, row: await snapshot() }).toEqual({ name, row: before });
    }
  });
});
