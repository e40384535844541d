import { EventEmitter } from 'node:events';
import { request } from 'undici';

/**
 * The baselines' call to the sandbox PSP: POST /v1/charges with undici's `request` and a
 * deadline over the whole answer, as the product's HTTP adapter makes it, under a key derived
 * from the payment id. No probe, no retry: a baseline that meets a failure answers 502 (the
 * bench counts it as an error). The call is the product's own so that the ratios measure the
 * product's layers, not a cheaper HTTP client on one side
 * (docs/decisions/0013-provider-calls-through-undici-request.md).
 */

/** The gateway's PROVIDER_TIMEOUT_MS default. */
const PROVIDER_TIMEOUT_MS = 5_000;

export type ChargeResult =
  | { kind: 'approved'; providerReference: string }
  | { kind: 'declined'; providerReference: string | null; failureCode: string }
  | { kind: 'failed'; status: number };

export async function chargeAtPsp(charge: {
  paymentId: string;
  amount: string;
  currency: string;
  paymentMethod: string;
  reference: string;
}): Promise<ChargeResult> {
  const abort = new EventEmitter();
  const timer = setTimeout(() => abort.emit('abort'), PROVIDER_TIMEOUT_MS);
  try {
    const response = await request(new URL('/v1/charges', process.env['PSP_URL']), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': `bench_payment_${charge.paymentId}`,
      },
      body: JSON.stringify({
        amount: charge.amount,
        currency: charge.currency,
        paymentMethod: charge.paymentMethod,
        reference: charge.reference,
        capture: true,
      }),
      signal: abort,
    });
    const body = JSON.parse(await response.body.text()) as {
      charge?: { id?: unknown };
      error?: { code?: unknown };
    };
    const id = typeof body.charge?.id === 'string' ? body.charge.id : null;
    if (response.statusCode === 200 && id !== null) {
      return { kind: 'approved', providerReference: id };
    }
    if (response.statusCode === 402 && typeof body.error?.code === 'string') {
      return { kind: 'declined', providerReference: id, failureCode: body.error.code };
    }
    return { kind: 'failed', status: response.statusCode };
  } finally {
    clearTimeout(timer);
  }
}

/** "10.50" → 1050: the baselines take two-decimal amounts only (the bench sends EUR). */
export function minorUnits(amount: string): string {
  return amount.replace('.', '').replace(/^0+(?=\d)/, '');
}
