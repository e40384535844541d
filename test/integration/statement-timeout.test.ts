import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  SET_MAINTENANCE_STATEMENT_TIMEOUT,
  withTransaction,
} from '../../lib/db/pool.ts';
import { sqlState } from '../../lib/db/sql-state.ts';
import { errorCodeOf, graphql, paymentOf } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { useTestDatabase } from '../support/test-database.ts';
import {
  createPaymentOn,
  keyRowOf,
  paymentInput,
  TENANT_A,
  useTestStackOn,
} from '../support/test-stack.ts';

/**
 * The services' pool runs every statement under a statement_timeout: a statement stuck on a
 * lock is cancelled (57014) and its request ends as a masked, retryable error, not a hang.
 */
const STATEMENT_TIMEOUT_MS = 500;
/** query_canceled: what PostgreSQL answers a statement cancelled by statement_timeout. */
const SQLSTATE_QUERY_CANCELED = '57014';
/** Bounds the wait for an answer: far above the timeout, far below a hang. */
const ANSWER_DEADLINE_MS = 10_000;
const database = useTestDatabase('statement_timeout');
const stack = useTestStackOn(database, {
  app: { statementTimeoutMs: STATEMENT_TIMEOUT_MS },
});

/** An error and every `cause` under it. */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (
    let e = error;
    e !== undefined && e !== null && chain.length < 10;
    e = (e as { cause?: unknown }).cause
  )
    chain.push(e);
  return chain;
}

describe('statement_timeout', () => {
  it('cancels a statement of the pool that runs longer, with 57014', async () => {
    const { pool } = stack.app.services.deps;
    const error: unknown = await pool.query('SELECT pg_sleep(3)').then(
      () => null,
      (e: unknown) => e,
    );
    expect(sqlState(error)).toBe(SQLSTATE_QUERY_CANCELED);
    // The connection is still good for the next statement.
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it(
    'ends a request stuck on a lock as a masked INTERNAL_SERVER_ERROR, leaving its key new',
    async () => {
      const key = 'statement-timeout-1';
      const locker = new pg.Client({ connectionString: database.url });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE idempotency_keys IN ACCESS EXCLUSIVE MODE');
        const answer = await graphql(stack.app.url, {
          apiKey: TENANT_A.apiKey,
          query: CREATE_PAYMENT,
          variables: { input: paymentInput(key) },
          timeoutMs: ANSWER_DEADLINE_MS,
        }).then(
          (a) => a,
          (error: unknown) => ({ error }),
        );
        if ('error' in answer)
          throw new Error('no answer within the deadline', { cause: answer.error });
        expect(answer.status).toBe(500);
        expect(errorCodeOf(answer)).toBe('INTERNAL_SERVER_ERROR');
        expect(answer.body.errors?.[0]?.message).toBe('Internal server error.');
        expect(JSON.stringify(answer.body)).not.toMatch(/statement|cancel|57014/i);
        // What was reported (a tRPC error from the service call) was caused by the cancellation.
        expect(stack.errors.flatMap(causeChain).map(sqlState)).toContain(SQLSTATE_QUERY_CANCELED);
      } finally {
        await locker.query('ROLLBACK');
        await locker.end();
      }
      expect(await keyRowOf(stack.db, key)).toBeUndefined();
      expect(stack.sandbox.charges({ reference: key })).toHaveLength(0);
      const retried = await createPaymentOn(stack, paymentInput(key));
      expect(paymentOf(retried).status).toBe('SUCCEEDED');
      expect(stack.sandbox.charges({ reference: key })).toHaveLength(1);
    },
    ANSWER_DEADLINE_MS * 2,
  );

  it('lets maintenance raise its own bound for one transaction only', async () => {
    const { pool } = stack.app.services.deps;
    const slept = await withTransaction(pool, async (tx) => {
      await tx.query(SET_MAINTENANCE_STATEMENT_TIMEOUT);
      await tx.query('SELECT pg_sleep(1)');
      return (await tx.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows[0];
    });
    expect(slept).toEqual({ statement_timeout: '5min' });
    const after = await pool.query<{ statement_timeout: string }>('SHOW statement_timeout');
    expect(after.rows).toEqual([{ statement_timeout: `${STATEMENT_TIMEOUT_MS}ms` }]);
    // Partition maintenance runs under it (retention.ts) and completes.
    await expect(stack.app.services.maintainPartitions()).resolves.toMatchObject({
      result: 'done',
    });
  });
});
