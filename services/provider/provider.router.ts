import { z } from 'zod';
import { logStep } from '../../lib/logging/request-trace.ts';
import { formatAmount } from '../../lib/money/money.ts';
import { procedure, router } from './provider.trpc.ts';
import type { ProviderDeps } from './provider.deps.ts';
import {
  outcomeOfCharge,
  type ChargeOperationOutcome,
  type ChargeOperationRequest,
  type ChargeOutcome,
  type ChargeRequest,
  type FinalChargeOutcome,
  type Probed,
} from './provider-port.ts';

/** Pause between attempts that the provider refused outright (503, 429). Short: the client is
 * waiting, and the refusal proves nothing happened, so giving up early is always safe. */
const UNAVAILABLE_RETRY_BACKOFF_MS = [50, 200, 500] as const;

const amountMinor = z.string().regex(/^[1-9]\d{0,17}$/);
const currency = z.string().regex(/^[A-Z]{3}$/);
const operationKind = z.enum(['capture', 'void', 'refund']);
/** The caller's remaining budget for this call (CallBudget); the provider timeout caps it. */
const budget = { timeoutMs: z.number().int().positive().optional() };

/**
 * A provider key as the payments service derives it: provider_<subject>_<HMAC, base64url>, or
 * <our id> for rows written before keys were derived from the request.
 */
const providerKey = z
  .string()
  .regex(/^provider_(payment|capture|void|refund)_([A-Za-z0-9_-]{43}|[0-9a-f-]{36})$/);

const chargeInput = z.strictObject({
  idempotencyKey: providerKey,
  amountMinor,
  currency,
  paymentMethod: z.string().min(1).max(200),
  reference: z.string().min(1).max(255),
  capture: z.boolean(),
  ...budget,
});

/** The public operation each provider call serves, for the metrics' `operation` label. */
const OPERATION_LABEL = {
  capture: 'capturePayment',
  void: 'cancelPayment',
  refund: 'refundPayment',
} as const;

/**
 * The provider service: owns the PSP adapter and the key of every call. A charge is always sent
 * with the payment's derived key, an operation with the operation's, so sending one again —
 * after a crash, a takeover, or from another process — can never make a second effect while the
 * provider remembers the key. Each procedure is one attempt; what follows a timeout (a probe,
 * sending again) is decided by the caller, who holds the request's lease.
 */
export const providerRouter = router({
  charge: procedure.input(chargeInput).mutation(({ ctx, input }) => charge(ctx.deps, input)),
  probeCharge: procedure
    .input(
      z.strictObject({
        idempotencyKey: providerKey,
        reference: z.string().min(1).max(255),
        ...budget,
      }),
    )
    .query(({ ctx, input }) => probeCharge(ctx.deps, input)),
  operate: procedure
    .input(
      z.strictObject({
        idempotencyKey: providerKey,
        kind: operationKind,
        chargeId: z.string().min(1).max(255),
        amountMinor: amountMinor.nullable(),
        currency,
        reason: z.string().max(255).nullable(),
        ...budget,
      }),
    )
    .mutation(({ ctx, input }) => operate(ctx.deps, input)),
  probeOperation: procedure
    .input(z.strictObject({ idempotencyKey: providerKey, kind: operationKind, ...budget }))
    .query(({ ctx, input }) => probeOperation(ctx.deps, input)),
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

/** The caller's budget, never more than one provider timeout. */
function timeoutOf(deps: ProviderDeps, requested: number | undefined): number {
  const { providerTimeoutMs } = deps.config;
  return Math.min(requested ?? providerTimeoutMs, providerTimeoutMs);
}

/**
 * Sends `attempt` again after refusals that prove nothing happened (503, 429), under the same
 * key, a few times with a short backoff; any other outcome is the answer.
 */
async function withRetriesOfRefusals<O extends { kind: string }>(
  deps: ProviderDeps,
  attempt: () => Promise<O>,
): Promise<O> {
  const attempts = Math.max(1, deps.config.providerMaxAttempts);
  for (let n = 1; ; n++) {
    const outcome = await attempt();
    if (outcome.kind !== 'unavailable' || n >= attempts) return outcome;
    const backoffMs =
      UNAVAILABLE_RETRY_BACKOFF_MS[Math.min(n, UNAVAILABLE_RETRY_BACKOFF_MS.length) - 1] ?? 0;
    await new Promise((resolve) => setTimeout(resolve, backoffMs));
  }
}

function charge(
  deps: ProviderDeps,
  request: ChargeRequest & { timeoutMs?: number | undefined },
): Promise<ChargeOutcome> {
  const labels = { service: 'provider' as const, operation: 'createPayment' };
  const timeoutMs = timeoutOf(deps, request.timeoutMs);
  return withRetriesOfRefusals(deps, () =>
    timed(deps, labels, async () => {
      const outcome = await deps.providerAdapter.charge({
        idempotencyKey: request.idempotencyKey,
        amount: formatAmount(BigInt(request.amountMinor), request.currency),
        currency: request.currency,
        paymentMethod: request.paymentMethod,
        reference: request.reference,
        capture: request.capture,
        timeoutMs,
        requestId: deps.trace?.requestId,
      });
      countCall(deps, labels, CHARGE_METRIC[outcome.kind]);
      return outcome;
    }),
  );
}

const CHARGE_METRIC = {
  approved: 'approved',
  declined: 'declined',
  timeout: 'timeout',
  unavailable: 'error',
} as const;

const OPERATION_METRIC = {
  applied: 'approved',
  refused: 'declined',
  unavailable: 'error',
  timeout: 'timeout',
} as const;

async function probeCharge(
  deps: ProviderDeps,
  request: { idempotencyKey: string; reference: string; timeoutMs?: number | undefined },
): Promise<Probed<FinalChargeOutcome>> {
  const labels = { service: 'provider' as const, operation: 'createPayment' };
  const probe = await timed(deps, labels, () =>
    deps.providerAdapter.probeCharge({
      idempotencyKey: request.idempotencyKey,
      reference: request.reference,
      timeoutMs: timeoutOf(deps, request.timeoutMs),
      requestId: deps.trace?.requestId,
    }),
  );
  countCall(deps, labels, probeMetric(probe.kind));
  return probe.kind === 'found' ? { kind: 'found', outcome: outcomeOfCharge(probe.charge) } : probe;
}

function operate(
  deps: ProviderDeps,
  request: ChargeOperationRequest & { timeoutMs?: number | undefined },
): Promise<ChargeOperationOutcome> {
  const labels = { service: 'provider' as const, operation: OPERATION_LABEL[request.kind] };
  const timeoutMs = timeoutOf(deps, request.timeoutMs);
  return withRetriesOfRefusals(deps, () =>
    timed(deps, labels, async () => {
      const outcome = await deps.providerAdapter.operate({
        kind: request.kind,
        chargeId: request.chargeId,
        reason: request.reason,
        amount:
          request.amountMinor === null
            ? null
            : formatAmount(BigInt(request.amountMinor), request.currency),
        idempotencyKey: request.idempotencyKey,
        timeoutMs,
        requestId: deps.trace?.requestId,
      });
      countCall(deps, labels, OPERATION_METRIC[outcome.kind]);
      return outcome;
    }),
  );
}

async function probeOperation(
  deps: ProviderDeps,
  request: {
    idempotencyKey: string;
    kind: ChargeOperationRequest['kind'];
    timeoutMs?: number | undefined;
  },
): Promise<Probed<Extract<ChargeOperationOutcome, { kind: 'applied' }>>> {
  const labels = { service: 'provider' as const, operation: OPERATION_LABEL[request.kind] };
  const probe = await timed(deps, labels, () =>
    deps.providerAdapter.probeOperation({
      kind: request.kind,
      idempotencyKey: request.idempotencyKey,
      timeoutMs: timeoutOf(deps, request.timeoutMs),
      requestId: deps.trace?.requestId,
    }),
  );
  countCall(deps, labels, probeMetric(probe.kind));
  return probe.kind === 'found'
    ? { kind: 'found', outcome: { kind: 'applied', providerReference: probe.providerReference } }
    : probe;
}

function probeMetric(kind: 'found' | 'missing' | 'timeout') {
  return ({ found: 'probe_found', missing: 'probe_missing', timeout: 'timeout' } as const)[kind];
}

/** One provider call, timed; an adapter error is counted as one. */
async function timed<T>(
  deps: ProviderDeps,
  labels: { service: 'provider'; operation: string },
  call: () => Promise<T>,
): Promise<T> {
  const stopTimer = deps.metrics.providerDuration.startTimer(labels);
  try {
    return await call();
  } catch (error) {
    countCall(deps, labels, 'error');
    throw error;
  } finally {
    stopTimer();
  }
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

/**
 * The provider service as a process of its own serves (SERVICES=provider): its procedures at
 * the paths the whole stack's router gives them (`provider.charge`, …), so a client of the
 * whole stack's router reaches them unchanged.
 */
export const providerServiceRouter = router({ provider: providerRouter });
