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
import { chargeAtPsp, minorUnits } from './psp-charge.ts';

const INSERT_PAYMENT = `
INSERT INTO bench_bare_payments (tenant_id, id, status, amount_minor, currency, payment_method,
                                 reference, provider_key)
VALUES ($1, $2, 'PROCESSING', $3, $4, $5, $6, $7)`;

const RECORD_OUTCOME = `
UPDATE bench_bare_payments
   SET status = $3, provider_reference = $4, failure_code = $5, updated_at = now()
 WHERE tenant_id = $1 AND id = $2 AND status = 'PROCESSING'`;

async function createPayment(pool: pg.Pool, request: PaymentRequest): Promise<Answer> {
  const id = randomUUID();
  await pool.query(INSERT_PAYMENT, [
    request.tenantId,
    id,
    minorUnits(request.amount),
    request.currency,
    request.paymentMethod,
    request.reference,
    `bench_payment_${id}`,
  ]);
  const charge = await chargeAtPsp({ paymentId: id, ...request });
  if (charge.kind === 'failed') return json(502, { error: 'PROVIDER_ERROR' });
  const status = charge.kind === 'approved' ? 'SUCCEEDED' : 'FAILED';
  const failureCode = charge.kind === 'declined' ? charge.failureCode : null;
  await pool.query(RECORD_OUTCOME, [
    request.tenantId,
    id,
    status,
    charge.providerReference,
    failureCode,
  ]);
  return json(200, {
    payment: {
      id,
      status,
      amount: request.amount,
      currency: request.currency,
      reference: request.reference,
      providerReference: charge.providerReference,
      failureCode,
    },
  });
}

await runBaseline('bare', createPayment);
