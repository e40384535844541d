import { z } from 'zod';
import { logStep } from '../kernel/logging/request-trace.ts';
import { formatAmount } from '../kernel/money/money.ts';
import { procedure, router } from '../trpc.ts';
import type { ProviderDeps } from '../context.ts';
import { providerChargeKey, providerOperationKey } from './provider-keys.ts';
import {
  outcomeOfCharge,
  type ChargeOperationOutcome,
  type ChargeOperationRequest,
  type ChargeOutcome,
  type ChargeRequest,
} from './provider-port.ts';

/** Pause between attempts that the provider refused outright (503, 429). Short: the client is
 * waiting, and the refusal proves nothing happened, so giving up early is always safe. */
const UNAVAILABLE_RETRY_BACKOFF_MS = [50, 200, 500] as const;
/** A re-call after a probe found nothing is only worth making with at least this much time left. */
const MIN_RECALL_BUDGET_MS = 100;

const chargeInput = z.strictObject({
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
    .mutation(({ ctx, input }) => chargeResolved(ctx.deps, input)),
  operate: procedure
    .input(
      z.strictObject({
        operationId: z.uuid(),
        kind: z.enum(['capture', 'void', 'refund']),
        chargeId: z.string().min(1).max(255),
        amountMinor: z
          .string()
          .regex(/^[1-9]\d{0,17}$/)
          .nullable(),
        currency: z.string().regex(/^[A-Z]{3}$/),
        reason: z.string().max(255).nullable(),
      }),
    )
    .mutation(({ ctx, input }) => operateWithRetries(ctx.deps, input)),
  statement: procedure
    .input(z.strictObject({ from: z.iso.datetime(), to: z.iso.datetime() }))
    .query(({ ctx, input }) =>
      ctx.deps.providerAdapter.statement({
        ...input,
        timeoutMs: ctx.deps.config.providerTimeoutMs,
        requestId: ctx.deps.trace?.requestId,
      }),
    ),
});

/**
 * A charge, resolved as far as one provider timeout plus one probe allow:
 *   call ─timeout─▶ probe by derived key ─found─▶ that charge's outcome
 *                                        ─missing─▶ call again, same key, in the time left
 *                                        ─no answer─▶ timeout (the caller parks the request)
 */
async function chargeResolved(deps: ProviderDeps, request: ChargeRequest): Promise<ChargeOutcome> {
  const timeoutMs = deps.config.providerTimeoutMs;
  const deadline = Date.now() + 2 * timeoutMs;
  const first = await chargeWithRetries(deps, { request, timeoutMs });
  if (first.kind !== 'timeout') return first;
  const probe = await deps.providerAdapter.probe({
    idempotencyKey: providerChargeKey(request.paymentId),
    timeoutMs,
    requestId: deps.trace?.requestId,
  });
  const labels = { service: 'provider' as const, operation: 'createPayment' };
  switch (probe.kind) {
    case 'found':
      countCall(deps, labels, 'probe_found');
      return outcomeOfCharge(probe.charge);
    case 'timeout':
      countCall(deps, labels, 'timeout');
      return { kind: 'timeout' };
    case 'missing': {
      countCall(deps, labels, 'probe_missing');
      const left = deadline - Date.now();
      if (left < MIN_RECALL_BUDGET_MS) return { kind: 'timeout' };
      // Safe because the key is the same: if the first attempt is still in flight at the
      // provider, this one joins it instead of charging again.
      return chargeOnce(deps, { request, timeoutMs: left });
    }
  }
}

async function chargeWithRetries(
  deps: ProviderDeps,
  call: { request: ChargeRequest; timeoutMs: number },
): Promise<ChargeOutcome> {
  const attempts = Math.max(1, deps.config.providerMaxAttempts);
  let outcome: ChargeOutcome = { kind: 'unavailable', retryAfterSeconds: 1 };
  for (let attempt = 1; attempt <= attempts; attempt++) {
    outcome = await chargeOnce(deps, call);
    if (outcome.kind !== 'unavailable' || attempt === attempts) return outcome;
    const backoffMs =
      UNAVAILABLE_RETRY_BACKOFF_MS[Math.min(attempt, UNAVAILABLE_RETRY_BACKOFF_MS.length) - 1] ?? 0;
    await new Promise((resolve) => setTimeout(resolve, backoffMs));
  }
  return outcome;
}

async function chargeOnce(
  deps: ProviderDeps,
  call: { request: ChargeRequest; timeoutMs: number },
): Promise<ChargeOutcome> {
  const { request } = call;
  const labels = { service: 'provider' as const, operation: 'createPayment' };
  const stopTimer = deps.metrics.providerDuration.startTimer(labels);
  try {
    const outcome = await deps.providerAdapter.charge({
      idempotencyKey: providerChargeKey(request.paymentId),
      amount: formatAmount(BigInt(request.amountMinor), request.currency),
      currency: request.currency,
      paymentMethod: request.paymentMethod,
      reference: request.reference,
      capture: request.capture,
      timeoutMs: call.timeoutMs,
      requestId: deps.trace?.requestId,
    });
    countCall(deps, labels, metricOutcome(outcome));
    return outcome;
  } catch (error) {
    countCall(deps, labels, 'error');
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

/** The public operation a capture or void serves, for the metrics' `operation` label. */
const OPERATION_LABEL = {
  capture: 'capturePayment',
  void: 'cancelPayment',
  refund: 'refundPayment',
} as const;

/**
 * A capture or void under the operation's derived key. Refusals that prove nothing happened are
 * retried briefly, like charges; a timeout is left to the caller, which re-sends the same key
 * later (a capture or void of an existing charge is always safe to repeat under its key).
 */
async function operateWithRetries(
  deps: ProviderDeps,
  request: ChargeOperationRequest,
): Promise<ChargeOperationOutcome> {
  const attempts = Math.max(1, deps.config.providerMaxAttempts);
  const labels = { service: 'provider' as const, operation: OPERATION_LABEL[request.kind] };
  let outcome: ChargeOperationOutcome = { kind: 'unavailable', retryAfterSeconds: 1 };
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const stopTimer = deps.metrics.providerDuration.startTimer(labels);
    try {
      outcome = await deps.providerAdapter.operate({
        kind: request.kind,
        chargeId: request.chargeId,
        reason: request.reason,
        amount:
          request.amountMinor === null
            ? null
            : formatAmount(BigInt(request.amountMinor), request.currency),
        idempotencyKey: providerOperationKey(request.kind, request.operationId),
        timeoutMs: deps.config.providerTimeoutMs,
        requestId: deps.trace?.requestId,
      });
    } catch (error) {
      countCall(deps, labels, 'error');
      throw error;
    } finally {
      stopTimer();
    }
    const metric = {
      applied: 'approved',
      refused: 'declined',
      unavailable: 'error',
      timeout: 'timeout',
    } as const;
    countCall(deps, labels, metric[outcome.kind]);
    if (outcome.kind !== 'unavailable' || attempt === attempts) return outcome;
    const backoffMs =
      UNAVAILABLE_RETRY_BACKOFF_MS[Math.min(attempt, UNAVAILABLE_RETRY_BACKOFF_MS.length) - 1] ?? 0;
    await new Promise((resolve) => setTimeout(resolve, backoffMs));
  }
  return outcome;
}

/** One provider call's outcome, counted and logged where it is known. */
function countCall(
  deps: ProviderDeps,
  labels: { service: 'provider'; operation: string },
  outcome: string,
): void {
  deps.metrics.providerCalls.inc({ ...labels, outcome });
  logStep(deps, { msg: 'provider call', call: labels.operation, outcome });
}
