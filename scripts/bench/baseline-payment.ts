import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { request } from 'undici';
import type { PaymentRequest } from './baseline-http.ts';

/**
 * The payment work both baselines do, each on its own payments table: insert the payment with
 * its provider key derived from the payment id, charge it at the sandbox PSP, record the outcome.
 *
 * The PSP call is POST /v1/charges with undici's `request` and a deadline over the whole answer,
 * as the product's HTTP adapter makes it, so that the ratios measure the product's layers, not a
 * cheaper HTTP client on one side (docs/decisions/0013-provider-calls-through-undici-request.md).
 * No probe, no retry: a failed call answers 502, which the bench counts as an error.
 */

/** The gateway's PROVIDER_TIMEOUT_MS default. */
const PROVIDER_TIMEOUT_MS = 5_000;

export type PaymentsTable = 'bench_bare_payments' | 'bench_ref_payments';

export interface Outcome {
  status: 'SUCCEEDED' | 'FAILED';
  providerReference: string | null;
  failureCode: string | null;
  /** The answer to send (and, for the reference, to store), as JSON text. */
  body: string;
}

const providerKey = (paymentId: string) => `bench_payment_${paymentId}`;

/** "10.50" → 1050: the baselines take two-decimal amounts only (the bench sends EUR). */
const minorUnits = (amount: string) => amount.replace('.', '').replace(/^0+(?=\d)/, '');

export function insertPayment(table: PaymentsTable, id: string, r: PaymentRequest): pg.QueryConfig {
  return {
    text: `INSERT INTO ${table} (tenant_id, id, status, amount_minor, currency, payment_method,
                                reference, provider_key)
           VALUES ($1, $2, 'PROCESSING', $3, $4, $5, $6, $7)`,
    values: paymentValues(id, r),
  };
}

/** The values of a new payment row, $1 to $7 of insertPayment, for a statement that inserts it. */
export function paymentValues(id: string, r: PaymentRequest): unknown[] {
  return [
    r.tenantId,
    id,
    minorUnits(r.amount),
    r.currency,
    r.paymentMethod,
    r.reference,
    providerKey(id),
  ];
}

export function recordOutcome(
  table: PaymentsTable,
  payment: { tenantId: string; id: string; outcome: Outcome },
): pg.QueryConfig {
  const { status, providerReference, failureCode } = payment.outcome;
  return {
    text: `UPDATE ${table} SET status = $3, provider_reference = $4, failure_code = $5, updated_at = now()
            WHERE tenant_id = $1 AND id = $2 AND status = 'PROCESSING'`,
    values: [payment.tenantId, payment.id, status, providerReference, failureCode],
  };
}

/** The charge's outcome and the answer it makes; null when the PSP call failed. */
export async function chargeAtPsp(id: string, r: PaymentRequest): Promise<Outcome | null> {
  const abort = new EventEmitter();
  const timer = setTimeout(() => abort.emit('abort'), PROVIDER_TIMEOUT_MS);
  try {
    const response = await request(new URL('/v1/charges', process.env['PSP_URL']), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': providerKey(id) },
      body: JSON.stringify({
        amount: r.amount,
        currency: r.currency,
        paymentMethod: r.paymentMethod,
        reference: r.reference,
        capture: true,
      }),
      signal: abort,
    });
    const body = JSON.parse(await response.body.text()) as {
      charge?: { id?: unknown };
      error?: { code?: unknown };
    };
    const providerReference = typeof body.charge?.id === 'string' ? body.charge.id : null;
    const code = body.error?.code;
    const approved = response.statusCode === 200 && providerReference !== null;
    if (!approved && (response.statusCode !== 402 || typeof code !== 'string')) return null;
    const status = approved ? 'SUCCEEDED' : 'FAILED';
    const failureCode = approved ? null : (code as string);
    const { amount, currency, reference } = r;
    const payment = { id, status, amount, currency, reference, providerReference, failureCode };
    return { status, providerReference, failureCode, body: JSON.stringify({ payment }) };
  } finally {
    clearTimeout(timer);
  }
}
