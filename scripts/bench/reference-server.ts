/**
 * Baseline 2, the hand-written reference: the product's design at its smallest, in plain
 * node:http + pg with no GraphQL, tRPC or zod.
 *
 *   read the key ─found─▶ replay the stored answer (one indexed read, no transaction),
 *                         or 422 (another request's key), or 409 (still running)
 *   tx 1: key row (INSERT … ON CONFLICT DO NOTHING on (tenant, key)) + payment row with its
 *         derived provider key (the intent) ─lost the race─▶ read again, answer as above
 *   provider call under the derived key
 *   tx 2: outcome on the payment + stored answer on the key (only while it is 'started')
 *
 * Left out, and what the product pays for them: no scope lock or partitions (retention), no
 * fencing token, lease or phase log (takeover and recovery), no outbox event, no probe or
 * retries, no metrics.
 *
 *   DATABASE_URL=… PSP_URL=… node --import tsx scripts/bench/reference-server.ts
 */
import { createHash, randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type pg from 'pg';
import { json, runBaseline, type Answer, type PaymentRequest } from './baseline-http.ts';
import { chargeAtPsp, insertPayment, recordOutcome } from './baseline-payment.ts';

const TABLE = 'bench_ref_payments';

const SELECT_KEY = `
SELECT request_hash, state, response::text AS response
  FROM bench_ref_keys WHERE tenant_id = $1 AND key = $2`;

const CLAIM_KEY = `
INSERT INTO bench_ref_keys (tenant_id, key, request_hash, state, payment_id)
VALUES ($1, $2, $3, 'started', $4)
ON CONFLICT (tenant_id, key) DO NOTHING
RETURNING 1`;

const STORE_ANSWER = `
UPDATE bench_ref_keys SET state = 'finished', response = $3, updated_at = now()
 WHERE tenant_id = $1 AND key = $2 AND state = 'started'`;

interface KeyRow {
  request_hash: Buffer;
  state: 'started' | 'finished';
  response: string | null;
}

function requestHash(request: PaymentRequest): Buffer {
  const { amount, currency, paymentMethod, reference } = request;
  return createHash('sha256')
    .update(JSON.stringify([amount, currency, paymentMethod, reference]))
    .digest();
}

/** The answer for a key someone already holds. */
function existing(row: KeyRow, hash: Buffer): Answer {
  if (!row.request_hash.equals(hash)) return json(422, { error: 'IDEMPOTENCY_KEY_REUSED' });
  if (row.state === 'started' || row.response === null) {
    return { ...json(409, { error: 'IDEMPOTENCY_KEY_IN_USE' }), headers: { 'retry-after': '1' } };
  }
  return { status: 200, body: row.response, headers: { 'idempotent-replayed': 'true' } };
}

async function readKey(pool: pg.Pool, request: PaymentRequest): Promise<KeyRow | undefined> {
  const { rows } = await pool.query<KeyRow>(SELECT_KEY, [request.tenantId, request.idempotencyKey]);
  return rows[0];
}

/** Runs `work` in one transaction, committed unless it returns false or throws. */
async function transaction(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<boolean>) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const commit = await work(client);
    await client.query(commit ? 'COMMIT' : 'ROLLBACK');
    return commit;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

export async function referenceCreatePayment(
  pool: pg.Pool,
  request: PaymentRequest,
): Promise<Answer> {
  const { tenantId, idempotencyKey } = request;
  const hash = requestHash(request);
  const found = await readKey(pool, request);
  if (found !== undefined) return existing(found, hash);

  const id = randomUUID();
  // false: a concurrent first request holds the key (the losing INSERT waited for its commit).
  const claimed = await transaction(pool, async (tx) => {
    const claim = await tx.query(CLAIM_KEY, [tenantId, idempotencyKey, hash, id]);
    if (claim.rowCount !== 1) return false;
    await tx.query(insertPayment(TABLE, id, request));
    return true;
  });
  if (!claimed) {
    const winner = await readKey(pool, request);
    return winner === undefined
      ? json(409, { error: 'IDEMPOTENCY_KEY_IN_USE' })
      : existing(winner, hash);
  }

  const outcome = await chargeAtPsp(id, request);
  if (outcome === null) return json(502, { error: 'PROVIDER_ERROR' });
  await transaction(pool, async (tx) => {
    await tx.query(recordOutcome(TABLE, { tenantId, id, outcome }));
    await tx.query(STORE_ANSWER, [tenantId, idempotencyKey, outcome.body]);
    return true;
  });
  return { status: 200, body: outcome.body };
}

// Run as a process (the bench starts it); imported, it only lends its handler (apollo-reference).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runBaseline('reference', referenceCreatePayment);
}
