/**
 * Baseline 2, the hand-written reference: the product's design at its tightest, in plain
 * node:http + pg with no GraphQL, tRPC or zod. Two statements for a new payment, each its own
 * transaction, as the leanest correct version of the design would send them:
 *
 *   admission: the key row (INSERT … ON CONFLICT DO NOTHING on (tenant, key)) and, only if it
 *              was inserted, the payment row with its provider key (the intent): one statement
 *     ─key taken─▶ read it: replay the stored answer, 422 (another request's key) or 409
 *   provider call under the provider key
 *   finish: the outcome on the payment and the stored answer on the key: one statement
 *
 * A replay costs the admission statement (which inserts nothing) and the read. Payment ids are
 * time-ordered, as the product's are (ADR 0035). Left out, and what the product pays for them:
 * no scope lock or partitions (retention), no fencing token, lease or phase log (takeover and
 * recovery), no outbox event, ledger or receipt, no sealing, no probe or retries, no metrics.
 * Until 2026-12-05 it read the key first and ran two explicit transactions (9 round trips a
 * payment, 3 commits): a slower reference than the product's own transport, which flattered the
 * product (docs/performance.md).
 *
 *   DATABASE_URL=… PSP_URL=… node --import tsx scripts/bench/reference-server.ts
 */
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type pg from 'pg';
import { timeOrderedId } from '../../lib/input/time-ordered-id.ts';
import { json, runBaseline, type Answer, type PaymentRequest } from './baseline-http.ts';
import { chargeAtPsp, paymentValues } from './baseline-payment.ts';

const SELECT_KEY = `
SELECT request_hash, state, response::text AS response
  FROM bench_ref_keys WHERE tenant_id = $1 AND key = $2`;

/** $1–$7 the payment (paymentValues), $8 the client's key, $9 the request hash. */
const ADMIT = `
WITH claim AS (
  INSERT INTO bench_ref_keys (tenant_id, key, request_hash, state, payment_id)
  VALUES ($1, $8, $9, 'started', $2)
  ON CONFLICT (tenant_id, key) DO NOTHING
  RETURNING 1
)
INSERT INTO bench_ref_payments (tenant_id, id, status, amount_minor, currency, payment_method,
                                reference, provider_key)
SELECT $1, $2, 'PROCESSING', $3, $4, $5, $6, $7 FROM claim
RETURNING 1`;

/** $1 tenant, $2 payment id, $3 status, $4 provider reference, $5 failure code, $6 key, $7 answer. */
const FINISH = `
WITH outcome AS (
  UPDATE bench_ref_payments
     SET status = $3, provider_reference = $4, failure_code = $5, updated_at = now()
   WHERE tenant_id = $1 AND id = $2 AND status = 'PROCESSING'
)
UPDATE bench_ref_keys SET state = 'finished', response = $7, updated_at = now()
 WHERE tenant_id = $1 AND key = $6 AND state = 'started'`;

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

export async function referenceCreatePayment(
  pool: pg.Pool,
  request: PaymentRequest,
): Promise<Answer> {
  const { tenantId, idempotencyKey } = request;
  const hash = requestHash(request);
  const id = timeOrderedId();
  const admitted = await pool.query(ADMIT, [...paymentValues(id, request), idempotencyKey, hash]);
  if (admitted.rowCount !== 1) {
    // The key is taken (a replay, a reuse, or a first request still running).
    const { rows } = await pool.query<KeyRow>(SELECT_KEY, [tenantId, idempotencyKey]);
    return rows[0] === undefined
      ? json(409, { error: 'IDEMPOTENCY_KEY_IN_USE' })
      : existing(rows[0], hash);
  }
  const outcome = await chargeAtPsp(id, request);
  if (outcome === null) return json(502, { error: 'PROVIDER_ERROR' });
  const { status, providerReference, failureCode, body } = outcome;
  await pool.query(FINISH, [
    tenantId,
    id,
    status,
    providerReference,
    failureCode,
    idempotencyKey,
    body,
  ]);
  return { status: 200, body };
}

// Run as a process (the bench starts it); imported, it only lends its handler (apollo-reference).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runBaseline('reference', referenceCreatePayment);
}
