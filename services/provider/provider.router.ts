import { z } from 'zod';
import { formatAmount } from '../kernel/money/money.ts';
import { procedure, router } from '../trpc.ts';
import type { ServiceDeps } from '../context.ts';
import { providerChargeKey } from './provider-keys.ts';
import type { ChargeOutcome, ChargeRequest } from './provider-port.ts';

/** Pause between attempts that the provider refused outright (503, 429). Short: the client is
 * waiting, and the refusal proves nothing happened, so giving up early is always safe. */
const UNAVAILABLE_RETRY_BACKOFF_MS = [50, 200, 500] as const;

const chargeInput = z.object({
  paymentId: z.uuid(),
  amountMinor: z.string().regex(/^[1-9]\d{0,17}$/),
  currency: z.string().regex(/^[A-Z]{3}$/),
  paymentMethod: z.string().min(1).max(200),
  reference: z.string().min(1).max(255),
  capture: z.boolean(),
});

/**
 * The provider service: owns the PSP adapter and the key of every call. A charge is always sent
 * with the payment's derived key, so retrying it — here, after a crash, or from another
 * process — can never make a second charge.
 */
export const providerRouter = router({
  charge: procedure
    .input(chargeInput)
    .mutation(({ ctx, input }) => chargeWithRetries(ctx.deps, input)),
});

async function chargeWithRetries(
  deps: ServiceDeps,
  request: ChargeRequest,
): Promise<ChargeOutcome> {
  const attempts = Math.max(1, deps.config.providerMaxAttempts);
  let outcome: ChargeOutcome = { kind: 'unavailable', retryAfterSeconds: 1 };
  for (let attempt = 1; attempt <= attempts; attempt++) {
    outcome = await chargeOnce(deps, request);
    if (outcome.kind !== 'unavailable' || attempt === attempts) return outcome;
    const backoffMs =
      UNAVAILABLE_RETRY_BACKOFF_MS[Math.min(attempt, UNAVAILABLE_RETRY_BACKOFF_MS.length) - 1] ?? 0;
    await new Promise((resolve) => setTimeout(resolve, backoffMs));
  }
  return outcome;
}

async function chargeOnce(deps: ServiceDeps, request: ChargeRequest): Promise<ChargeOutcome> {
  const labels = { operation: 'createPayment' };
  const stopTimer = deps.metrics.providerDuration.startTimer(labels);
  try {
    const outcome = await deps.providerAdapter.charge({
      idempotencyKey: providerChargeKey(request.paymentId),
      amount: formatAmount(BigInt(request.amountMinor), request.currency),
      currency: request.currency,
      paymentMethod: request.paymentMethod,
      reference: request.reference,
      capture: request.capture,
      timeoutMs: deps.config.providerTimeoutMs,
    });
    deps.metrics.providerCalls.inc({ ...labels, outcome: metricOutcome(outcome) });
    return outcome;
  } catch (error) {
    deps.metrics.providerCalls.inc({ ...labels, outcome: 'error' });
    throw error;
  } finally {
    stopTimer();
  }
}

function metricOutcome(outcome: ChargeOutcome): 'approved' | 'declined' | 'timeout' | 'error' {
  switch (outcome.kind) {
    case 'approved':
      return 'approved';
    case 'declined':
      return 'declined';
    case 'timeout':
      return 'timeout';
    case 'unavailable':
      return 'error';
  }
}
