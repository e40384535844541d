/**
 * The baselines' call to the sandbox PSP: POST /v1/charges with fetch, as the product's HTTP
 * adapter makes it, under a key derived from the payment id. No probe, no retry: a baseline
 * that meets a failure answers 502 (the bench counts it as an error).
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
  const response = await fetch(new URL('/v1/charges', process.env['PSP_URL']), {
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
    signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
  });
  const body = (await response.json()) as {
    charge?: { id?: unknown };
    error?: { code?: unknown };
  };
  const id = typeof body.charge?.id === 'string' ? body.charge.id : null;
  if (response.status === 200 && id !== null) return { kind: 'approved', providerReference: id };
  if (response.status === 402 && typeof body.error?.code === 'string') {
    return { kind: 'declined', providerReference: id, failureCode: body.error.code };
  }
  return { kind: 'failed', status: response.status };
}

/** "10.50" → 1050: the baselines take two-decimal amounts only (the bench sends EUR). */
export function minorUnits(amount: string): string {
  return amount.replace('.', '').replace(/^0+(?=\d)/, '');
}
