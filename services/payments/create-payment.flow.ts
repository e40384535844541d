import { timeOrderedId } from '../../lib/input/time-ordered-id.ts';
import type { IdempotencyInfo } from '../../lib/idempotency/idempotency-key.ts';
import type { PaymentsDeps } from './payments.deps.ts';
import {
  AppError,
  LIB_ERRORS,
  LeaseLostError,
  publicError,
  type PublicError,
} from '../../lib/errors.ts';
import { keyInUse, outcomePending, PAYMENT_ERRORS } from './payments.errors.ts';
import { defineOperation } from '../../lib/idempotency/operation.ts';
import type { OwnedRequest } from '../../lib/idempotency/owned-request.ts';
import type { Resumer } from '../../lib/idempotency/recovery-worker.ts';
import {
  UNKNOWN_RETRY_AFTER_SECONDS,
  type Admission,
  type FirstPhase,
} from '../../lib/idempotency/engine.ts';
import type { StoredAnswer } from '../../lib/idempotency/types.ts';
import { lineageIdOf, scopeIdsOf } from '../../lib/idempotency/operation.ts';
import { MAX_KEY_GENERATIONS, paymentHoldingKey, providerKeyTaken } from './provider-key-holder.ts';
import { providerRequestKey } from './provider-keys.ts';
import { resolveWithProvider, type Unasked } from './provider-resolution.ts';
import { createPaymentAnswer, type CreatePaymentResult } from './create-payment.answers.ts';
import type { ChargeOutcome } from '../provider/contract.ts';
import { normaliseCreatePayment, type CreatePaymentInput } from './create-payment.command.ts';
import { PAYMENT_ANSWER_VERSION, paymentOutcomeOf } from './stored-answers.ts';
import { INSERT_PAYMENT } from './payments.sql.ts';
import { duplicateReference, referenceTaken } from './reference-guard.ts';
import { finishWithOutcome, loadPayment } from './create-payment.finish.ts';
import type { PaymentRow } from './payment.view.ts';

export const CREATE_PAYMENT = defineOperation({
  id: 'payments.create.v1',
  publicName: 'createPayment',
  service: 'payments',
  answerVersion: PAYMENT_ANSWER_VERSION,
  outcomeOf: paymentOutcomeOf,
});

/**
 * The phases of createPayment. Two commits per new payment:
 *
 *   admission + payment row + intent ──▶ provider_charge_sent ──(provider call, derived key)──▶
 *   outcome + stored answer ──▶ finished
 *
 * `provider_charge_sent` is ambiguous by construction: a charge with the payment's derived key
 * may or may not exist at the provider. Resuming from it asks the provider first (a probe by the
 * key, provider-resolution.ts) and sends again under the same key only when the provider says it
 * has no such charge. The final phase is create-payment.finish.ts, shared with reconciliation
 * and an operator's resolution.
 */
export const CREATE_PAYMENT_POINTS = {
  chargeSent: 'provider_charge_sent',
  finished: 'finished',
} as const;

/** Every fault point a createPayment passes, in order. Crash tests iterate over this list. */
export const CREATE_PAYMENT_FAULT_POINTS = [
  'createPayment.provider_charge_sent.before-commit',
  'createPayment.provider_charge_sent.commit-sent',
  'createPayment.provider_charge_sent.after-commit',
  'createPayment.provider_charge.before-call',
  'createPayment.provider_charge.after-call',
  'createPayment.finished.before-commit',
  'createPayment.finished.commit-sent',
  'createPayment.finished.after-commit',
] as const;

export type { IdempotencyInfo };

export type { CreatePaymentResult };

/** A stored answer as this request's caller gets it. */
const answerOf = (
  deps: PaymentsDeps,
  stored: StoredAnswer,
  info: { tenantId: string; key: string; replayed: boolean },
) => createPaymentAnswer(deps, stored, { operation: CREATE_PAYMENT, ...info });

export async function createPayment(
  deps: PaymentsDeps,
  input: CreatePaymentInput,
): Promise<CreatePaymentResult> {
  let normalised: ReturnType<typeof normaliseCreatePayment>;
  try {
    deps.engine.checkKey(CREATE_PAYMENT, input.idempotencyKey);
    normalised = normaliseCreatePayment(input);
  } catch (error) {
    if (error instanceof AppError) return { ok: false, error: error.toPublic() };
    throw error;
  }
  const { key, command } = normalised;
  const tenantId = input.tenantId;
  const secret = await deps.providerKeySecret.get();
  const keyOf = (after?: string) =>
    providerRequestKey(secret, {
      subject: 'payment',
      tenantId,
      lineage: lineageIdOf(CREATE_PAYMENT),
      clientKey: key,
      command,
      ...(after === undefined ? {} : { after }),
    });
  // Drawn when admission is about to insert, once per request: a replay or a conflict needs
  // neither the id nor the derived key (a random draw, a canonical form and an HMAC).
  let paymentId: string | undefined;
  let providerKey: string | undefined;
  const newPayment = () => {
    paymentId ??= timeOrderedId();
    providerKey ??= keyOf();
    return { paymentId, providerKey };
  };
  let admission: Admission | undefined;
  for (let generation = 0; admission === undefined; generation++) {
    try {
      admission = await admitCreatePayment(deps, { input, key, command, newPayment });
    } catch (error) {
      // This very request made a payment already and our record of its key is gone: expired
      // (a new generation gets a key of its own), or lost with a failover or a restore (it
      // was carried out: say so rather than charge under the provider's memory of it).
      if (
        providerKeyTaken(error) &&
        providerKey !== undefined &&
        generation < MAX_KEY_GENERATIONS
      ) {
        const holder = await paymentHoldingKey(deps.pool, {
          tenantId,
          providerKey,
          ttlSeconds: deps.engine.deps.ttlSeconds,
          operationIds: scopeIdsOf(CREATE_PAYMENT),
          clientKey: key,
        });
        if (holder.kind === 'applied') return { ok: false, error: holder.error };
        if (holder.kind === 'expired') providerKey = keyOf(holder.id);
        continue; // 'none': the holder went away meanwhile (retention); admit again
      }
      // The tenant's reference guard: another live payment holds this reference (nothing of
      // this request was stored; the statement failed and took the whole admission with it).
      if (!referenceTaken(error) || command.reference === null) throw error;
      return {
        ok: false,
        error: await duplicateReference(deps, { tenantId, reference: command.reference }),
      };
    }
  }
  switch (admission.kind) {
    case 'replay':
      return answerOf(deps, admission.answer, { tenantId, key, replayed: true });
    case 'decided': // createPayment decides nothing at admission; answered as stored
      return answerOf(deps, admission.answer, { tenantId, key, replayed: false });
    case 'reused':
      return { ok: false, error: publicError(LIB_ERRORS.IDEMPOTENCY_KEY_REUSED) };
    case 'in_use':
      return { ok: false, error: keyInUse(admission.retryAfterSeconds, admission.resourceId) };
    case 'unknown':
      return {
        ok: false,
        error: outcomePending(admission.retryAfterSeconds, admission.resourceId),
      };
    case 'owned': {
      // A new owner has the row it just inserted (unless the answer was lost with the
      // connection after the commit); a retry that took over reads it.
      const known =
        admission.via === 'new'
          ? (admission.answers[0]?.rows[0] as PaymentRow | undefined)
          : undefined;
      const driven = await driveCreatePayment(deps, {
        request: admission.request,
        known,
        resumed: admission.via === 'takeover',
      });
      return 'error' in driven
        ? { ok: false, error: driven.error }
        : answerOf(deps, driven.stored, { tenantId, key, replayed: false });
    }
  }
}

/** Admission of a new payment: its key, its payment row and the intent, in one round trip. */
function admitCreatePayment(
  deps: PaymentsDeps,
  request: {
    input: CreatePaymentInput;
    key: string;
    command: ReturnType<typeof normaliseCreatePayment>['command'];
    newPayment: () => { paymentId: string; providerKey: string };
  },
): Promise<Admission> {
  const { input, key, command, newPayment } = request;
  return deps.engine.admit({
    scope: { tenantId: input.tenantId, operation: CREATE_PAYMENT, key },
    command,
    first: () => firstPhase(input, command, newPayment()),
  });
}

/** The payment row and intent that admission commits with a new key. */
function firstPhase(
  input: CreatePaymentInput,
  command: ReturnType<typeof normaliseCreatePayment>['command'],
  { paymentId, providerKey }: { paymentId: string; providerKey: string },
): FirstPhase {
  return {
    to: CREATE_PAYMENT_POINTS.chargeSent,
    resourceId: paymentId,
    // Committed with the key in one round trip: a payment row exists exactly when its key does.
    statements: [
      {
        text: INSERT_PAYMENT,
        values: [
          input.tenantId,
          paymentId,
          command.amountMinor,
          command.currency,
          command.paymentMethod,
          command.captureMethod,
          command.reference,
          command.description,
          command.metadata === null ? null : JSON.stringify(command.metadata),
          providerKey,
        ],
      },
    ],
  };
}

/** The recovery worker's entry: the same drive a client retry's takeover runs. */
export function createPaymentResumer(deps: PaymentsDeps): Resumer {
  return {
    operation: CREATE_PAYMENT,
    resume: (request, trace) =>
      driveCreatePayment(deps.forTrace(trace), { request, known: undefined, resumed: true }),
  };
}

/**
 * Drives an owned createPayment from its recovery point to `finished`, or to a resumable stop.
 * It never reports a charge it could not confirm as failed: a timeout leaves the request at
 * `provider_charge_sent` with its lease released, for the next retry or sweep. `resumed`: an
 * earlier owner may have sent the charge, so the provider is asked before anything is sent.
 */
async function driveCreatePayment(
  deps: PaymentsDeps,
  run: { request: OwnedRequest; known: PaymentRow | undefined; resumed: boolean },
): Promise<{ stored: StoredAnswer } | { error: PublicError }> {
  const { request } = run;
  const { pool, faults, provider } = deps;
  const paymentId = request.resourceId;
  if (request.recoveryPoint !== CREATE_PAYMENT_POINTS.chargeSent || paymentId === null) {
    throw new Error(`createPayment cannot resume from ${request.recoveryPoint}`);
  }
  const payment =
    run.known ?? (await loadPayment(pool, { tenantId: request.scope.tenantId, paymentId }));
  if (payment === undefined)
    throw new Error(`payment ${paymentId} of an admitted request is missing`);

  await faults.hit('createPayment.provider_charge.before-call');
  const reference = payment.reference ?? paymentId;
  let outcome: ChargeOutcome | Unasked;
  try {
    outcome = await resolveWithProvider(request, {
      resumed: run.resumed,
      timeoutMs: deps.config.providerTimeoutMs,
      send: ({ timeoutMs }) =>
        provider.charge({
          idempotencyKey: payment.provider_key,
          amountMinor: payment.amount_minor,
          currency: payment.currency,
          paymentMethod: payment.payment_method,
          reference,
          capture: payment.capture_method === 'AUTOMATIC',
          timeoutMs,
        }),
      probe: ({ timeoutMs }) =>
        provider.probeCharge({ idempotencyKey: payment.provider_key, reference, timeoutMs }),
    });
  } catch (error) {
    // Taken over while we waited (or our lease could not be renewed): whoever holds the request
    // now finishes it. We stopped before any further provider call.
    if (error instanceof LeaseLostError) return { error: keyInUse(1, paymentId) };
    // We cannot tell whether the charge was made: park the request as an unknown attempt and
    // report a failure that is not stored; the same key resumes into the same provider key.
    await request.release('timeout');
    throw error;
  }
  await faults.hit('createPayment.provider_charge.after-call');

  switch (outcome.kind) {
    case 'unavailable':
      await request.release('unavailable');
      return {
        error: publicError(PAYMENT_ERRORS.PROVIDER_UNAVAILABLE, {
          retryAfterSeconds: outcome.retryAfterSeconds,
          paymentId,
        }),
      };
    case 'unasked':
      // Nothing went out unanswered: handed on at once, with no attempt counted toward unknown.
      await request.release('unasked');
      return { error: outcomePending(1, paymentId) };
    case 'timeout': {
      const state = await request.release('timeout');
      return {
        error: outcomePending(state === 'unknown' ? UNKNOWN_RETRY_AFTER_SECONDS : 1, paymentId),
      };
    }
    case 'approved':
    case 'declined':
      try {
        return {
          stored: await finishWithOutcome(deps, { request, payment, outcome, settlement: null }),
        };
      } catch (error) {
        // A zombie: someone took the request over while we were away. They will finish it.
        if (error instanceof LeaseLostError) return { error: keyInUse(1, paymentId) };
        // The final phase did not commit, or whether it did cannot be known yet (the database
        // dropped out; CommitUnconfirmedError): hand the request on at once instead of holding
        // it for a whole lease. Its fence refuses the hand-over if the phase did commit. The
        // provider's answer is not lost: the next owner asks again with the same key and gets
        // the same charge.
        await request.release('interrupted').catch(() => undefined);
        throw error;
      }
  }
}
