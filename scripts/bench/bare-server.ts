/**
 * Baseline 1, the bare handler: the payment work with no idempotency at all. Insert the payment
 * (one autocommit transaction), charge it at the PSP, record the outcome (a second one). No key,
 * no replay, no protection from duplicates: a retried request is charged again.
 *
 *   DATABASE_URL=… PSP_URL=… node --import tsx scripts/bench/bare-server.ts
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { json, runBaseline, type Answer, type PaymentRequest } from './baseline-http.ts';
import { chargeAtPsp, insertPayment, recordOutcome } from './baseline-payment.ts';

const TABLE = 'bench_bare_payments';

async function createPayment(pool: pg.Pool, request: PaymentRequest): Promise<Answer> {
  const id = randomUUID();
  await pool.query(insertPayment(TABLE, id, request));
  const outcome = await chargeAtPsp(id, request);
  if (outcome === null) return json(502, { error: 'PROVIDER_ERROR' });
  await pool.query(recordOutcome(TABLE, { tenantId: request.tenantId, id, outcome }));
  return { status: 200, body: outcome.body };
}

await runBaseline('bare', createPayment);
