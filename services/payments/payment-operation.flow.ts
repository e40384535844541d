import { timeOrderedId } from '../../lib/input/time-ordered-id.ts';
import type { PaymentsDeps } from './payments.deps.ts';
import type { JsonValue } from '../../lib/canonical-json.ts';
import type { TxClient } from '../../lib/db/pool.ts';
import { AppError, LeaseLostError, publicError, type PublicError } from '../../lib/errors.ts';
import {
  keyInUse,
  outcomePending,
  PAYMENT_ERRORS,
  type PaymentRefusal,
} from './payments.errors.ts';
import { notAdmitted } from '../../lib/idempotency/not-admitted.ts';
import type { OperationDef } from '../../lib/idempotency/operation.ts';
import type { OwnedRequest } from '../../lib/idempotency/owned-request.ts';
import type { Resumer } from '../../lib/idempotency/recovery-worker.ts';
import type { StoredAnswer } from '../../lib/idempotency/types.ts';
import { lineageIdOf, scopeIdsOf } from '../../lib/idempotency/operation.ts';
import {
  MAX_KEY_GENERATIONS,
  operationHoldingKey,
  RequestAlreadyApplied,
  type KeyTarget,
} from './provider-key-holder.ts';
import { providerRequestKey } from './provider-keys.ts';
import type { ChargeOperationOutcome } from '../provider/contract.ts';
import {
  normaliseOperation,
  type OperationCommand,
  type OperationInput,
} from './payment-operation.command.ts';
import {
  loadOperation,
  operationAnswer,
  type OperationResult,
  type OperationRow,
} from './payment-operation.answers.ts';
import { publishOperationOutcome } from './payment-events.ts';
import { resolveWithProvider, type Unasked } from './provider-resolution.ts';
import { UNKNOWN_RETRY_AFTER_SECONDS } from '../../lib/idempotency/engine.ts';
import { refundsOf } from './payment-rows.ts';
import {
  INSERT_OPERATION,
  NEXT_PAYMENT_VERSION,
  RECORD_OPERATION_OUTCOME,
  SELECT_PAYMENT_FOR_UPDATE,
} from './payments.sql.ts';
import { toPaymentView, toRefundView, type PaymentRow } from './payment.view.ts';
import { canonicalUuid } from '../../lib/input/uuid.ts';

/**
 * An operation on an existing payment whose effect is one provider call (capture, cancel, refund):
 *
 *   admission + payment locked + rules checked + operation row (the intent) ──▶ <sentPoint>
 *   ──(provider call, the operation's derived key)──▶ outcome + payment + stored answer ──▶ finished
 *
 * Resuming from <sentPoint> asks the provider first (provider-resolution.ts). Attempts the
 * provider never answers make the request unknown after PROVIDER_UNKNOWN_AFTER_ATTEMPTS, as for
 * a charge; reconciliation then asks again (reconcile-operations.ts).
 *
 * A rule the payment breaks (not found, wrong state, amount too large) decides the request at
 * admission: the error is stored for the key and replayed with the same code. The payment's row
 * lock in the admission transaction puts operations on one payment in a line, so their rules
 * (one capture, no over-refund) see each other.
 */
export interface PaymentOperationSpec {
  operation: OperationDef;
  kind: 'capture' | 'cancel' | 'refund';
  providerKind: 'capture' | 'void' | 'refund';
  sentPoint: string;
  /**
   * Whether the payment's answers list operations of this kind (its refunds): then the
   * operation's row, and its refusal, are changes of the payment too, with a version of their
   * own (payments.sql.ts, NEXT_PAYMENT_VERSION).
   */
  listedOnPayment: boolean;
  /** Checks the locked payment; returns the refusal, or the amount the provider call carries. */
  check(
    tx: TxClient,
    target: { tenantId: string; payment: PaymentRow; command: OperationCommand },
  ): Promise<{ refuse: PaymentRefusal } | { amountMinor: string | null }>;
  /** Applies the provider's success to the payment in the final transaction; returns it after. */
  apply(
    tx: TxClient,
    target: { tenantId: string; payment: PaymentRow; operation: OperationRow },
  ): Promise<PaymentRow>;
}

export async function runPaymentOperation(
  deps: PaymentsDeps,
  run: { spec: PaymentOperationSpec; input: OperationInput },
): Promise<OperationResult> {
  const { spec, input } = run;
  const operationId = timeOrderedId();
  let known: { payment: PaymentRow; operation: OperationRow } | undefined;
  let admission;
  let command: OperationCommand;
  try {
    deps.engine.checkKey(spec.operation, input.idempotencyKey);
    command = normaliseOperation(input);
    const secret = await deps.providerKeySecret.get();
    const providerKey = (after?: string) =>
      providerRequestKey(secret, {
        subject: spec.providerKind,
        tenantId: input.tenantId,
        lineage: lineageIdOf(spec.operation),
        clientKey: input.idempotencyKey,
        command,
        ...(after === undefined ? {} : { after }),
      });
    admission = await deps.engine.admit({
      scope: { tenantId: input.tenantId, operation: spec.operation, key: input.idempotencyKey },
      command,
      first: {
        to: spec.sentPoint,
        resourceId: operationId,
        work: async (tx) => {
          const decision = await admitOperation(tx, {
            spec,
            tenantId: input.tenantId,
            operationId,
            providerKey,
            ttlSeconds: deps.engine.deps.ttlSeconds,
            operationIds: scopeIdsOf(spec.operation),
            clientKey: input.idempotencyKey,
            command,
          });
          if ('refuse' in decision) {
            return { decided: { error: storedError(decision.refuse) } };
          }
          known = decision;
          return undefined;
        },
      },
    });
  } catch (error) {
    // Input errors, and a request carried out already whose record was lost, are answered
    // without storing anything for the key.
    if (error instanceof AppError) return { ok: false, error: error.toPublic(), replayed: false };
    if (error instanceof RequestAlreadyApplied)
      return { ok: false, error: error.error, replayed: false };
    throw error;
  }
  const answerOf = (stored: StoredAnswer, replayed: boolean) =>
    operationAnswer(deps, stored, {
      operation: spec.operation,
      tenantId: input.tenantId,
      key: input.idempotencyKey,
      replayed,
    });
  switch (admission.kind) {
    case 'replay':
      return answerOf(admission.answer, true);
    case 'decided':
      return answerOf(admission.answer, false);
    case 'reused':
    case 'in_use':
      return notAdmitted(admission);
    case 'unknown':
      // The provider never answered its attempts: reconciliation settles it, then retries replay.
      return {
        ok: false,
        error: outcomePending(admission.retryAfterSeconds, command.paymentId),
        replayed: false,
      };
    case 'owned': {
      const driven = await driveOperation(deps, {
        spec,
        request: admission.request,
        known: admission.via === 'new' ? known : undefined,
        resumed: admission.via === 'takeover',
      });
      return 'error' in driven
        ? { ok: false, error: driven.error, replayed: false }
        : answerOf(driven.stored, false);
    }
  }
}

export function paymentOperationResumer(deps: PaymentsDeps, spec: PaymentOperationSpec): Resumer {
  return {
    operation: spec.operation,
    resume: (request, trace) =>
      driveOperation(deps.forTrace(trace), { spec, request, known: undefined, resumed: true }),
  };
}

async function admitOperation(
  tx: TxClient,
  admit: {
    spec: PaymentOperationSpec;
    tenantId: string;
    operationId: string;
    /** The provider key the request derives; `after` for a generation after an expired one. */
    providerKey: (after?: string) => string;
    ttlSeconds: number;
    operationIds: string[];
    clientKey: string;
    command: OperationCommand;
  },
): Promise<{ refuse: PaymentRefusal } | { payment: PaymentRow; operation: OperationRow }> {
  const { spec, tenantId, operationId, command } = admit;
  if (canonicalUuid(command.paymentId) === null)
    return { refuse: PAYMENT_ERRORS.PAYMENT_NOT_FOUND };
  const { rows } = await tx.query<PaymentRow>(SELECT_PAYMENT_FOR_UPDATE, [
    tenantId,
    command.paymentId,
  ]);
  const payment = rows[0];
  if (payment === undefined) return { refuse: PAYMENT_ERRORS.PAYMENT_NOT_FOUND };
  const checked = await spec.check(tx, { tenantId, payment, command });
  if ('refuse' in checked) return checked;
  const providerKey = await unheldProviderKey(tx, admit);
  const inserted = await tx.query<OperationRow>(INSERT_OPERATION, [
    tenantId,
    operationId,
    payment.id,
    spec.kind,
    checked.amountMinor,
    providerKey,
    command.reason,
  ]);
  if (spec.listedOnPayment) await tx.query(NEXT_PAYMENT_VERSION, [tenantId, payment.id]);
  return { payment, operation: inserted.rows[0]! };
}

/**
 * Drives an owned operation from its intent to `finished`, or to a resumable stop. `resumed`: an
 * earlier owner may have sent it, so the provider is asked before anything is sent again.
 */
async function driveOperation(
  deps: PaymentsDeps,
  run: {
    spec: PaymentOperationSpec;
    request: OwnedRequest;
    known: { payment: PaymentRow; operation: OperationRow } | undefined;
    resumed: boolean;
  },
): Promise<{ stored: StoredAnswer } | { error: PublicError }> {
  const { spec, request } = run;
  const { publicName } = spec.operation;
  const { payment, operation } =
    run.known ??
    (await loadOperation(deps, {
      tenantId: request.scope.tenantId,
      operationId: request.resourceId ?? '',
    }));
  await deps.faults.hit(`${publicName}.provider_call.before-call`);
  const target = { idempotencyKey: operation.provider_key, kind: spec.providerKind };
  let outcome: ChargeOperationOutcome | Unasked;
  try {
    outcome = await resolveWithProvider(request, {
      resumed: run.resumed,
      timeoutMs: deps.config.providerTimeoutMs,
      send: ({ timeoutMs }) =>
        deps.provider.operate({
          ...target,
          chargeId: payment.provider_reference ?? '',
          amountMinor: operation.amount_minor,
          currency: payment.currency,
          reason: operation.reason,
          timeoutMs,
        }),
      probe: ({ timeoutMs }) => deps.provider.probeOperation({ ...target, timeoutMs }),
    });
  } catch (error) {
    if (error instanceof LeaseLostError) return { error: keyInUse(1, payment.id) };
    await request.release('timeout');
    throw error;
  }
  await deps.faults.hit(`${publicName}.provider_call.after-call`);
  switch (outcome.kind) {
    case 'unavailable':
      await request.release('unavailable');
      return {
        error: publicError(PAYMENT_ERRORS.PROVIDER_UNAVAILABLE, {
          retryAfterSeconds: outcome.retryAfterSeconds,
          paymentId: payment.id,
        }),
      };
    case 'unasked':
      // Nothing went out unanswered: handed on at once, with no attempt counted toward unknown.
      await request.release('unasked');
      return { error: outcomePending(1, payment.id) };
    case 'timeout': {
      // After PROVIDER_UNKNOWN_AFTER_ATTEMPTS of these the request is unknown: reconciliation,
      // not more attempts, settles it (reconcile-operations.ts).
      const state = await request.release('timeout');
      const retryAfterSeconds = state === 'unknown' ? UNKNOWN_RETRY_AFTER_SECONDS : 1;
      return { error: outcomePending(retryAfterSeconds, payment.id) };
    }
    case 'applied':
    case 'refused':
      try {
        return {
          stored: await finishOperation(deps, { spec, request, payment, operation, outcome }),
        };
      } catch (error) {
        if (error instanceof LeaseLostError) return { error: keyInUse(1, payment.id) };
        await request.release('interrupted').catch(() => undefined);
        throw error;
      }
  }
}

/** The provider's refusal codes, as the catalog's business errors. */
function refusalOf(providerCode: string): PaymentRefusal {
  switch (providerCode) {
    case 'AMOUNT_EXCEEDS_REFUNDABLE':
      return PAYMENT_ERRORS.AMOUNT_EXCEEDS_REFUNDABLE;
    case 'AMOUNT_EXCEEDS_AUTHORIZED':
      return PAYMENT_ERRORS.AMOUNT_EXCEEDS_CAPTURABLE;
    default:
      return PAYMENT_ERRORS.INVALID_PAYMENT_STATE;
  }
}

/** A refusal as the key stores it: its code and message, nothing a later change could vary. */
/**
 * The provider key for a new operation, read under the payment's lock (so no other admission
 * of it races this one): the request's own, unless an operation already holds it. Held by one
 * made before the replay window: a new generation, keyed after it. Held by one made within it:
 * this request was carried out already and its record lost, so RequestAlreadyApplied.
 */
async function unheldProviderKey(
  tx: TxClient,
  admit: Omit<KeyTarget, 'providerKey'> & { providerKey: (after?: string) => string },
): Promise<string> {
  let key = admit.providerKey();
  for (let generation = 0; generation < MAX_KEY_GENERATIONS; generation++) {
    const holder = await operationHoldingKey(tx, { ...admit, providerKey: key });
    if (holder.kind === 'none') return key;
    if (holder.kind === 'applied') throw new RequestAlreadyApplied(holder.error);
    key = admit.providerKey(holder.id);
  }
  throw new Error(`more than ${MAX_KEY_GENERATIONS} generations of one operation's request`);
}

function storedError(refusal: PaymentRefusal): { code: string; message: string } {
  return { code: refusal.code, message: refusal.message };
}

async function finishOperation(
  deps: PaymentsDeps,
  final: {
    spec: PaymentOperationSpec;
    request: OwnedRequest;
    payment: PaymentRow;
    operation: OperationRow;
    outcome: Extract<ChargeOperationOutcome, { kind: 'applied' | 'refused' }>;
  },
): Promise<StoredAnswer> {
  const { spec, request, payment, operation, outcome } = final;
  const tenantId = request.scope.tenantId;
  if (outcome.kind === 'refused') {
    // The provider says the charge cannot take it (changed out of band): a business outcome,
    // stored for the key like any refusal at admission.
    return request.finish({ error: storedError(refusalOf(outcome.code)) }, async (tx) => {
      await tx.query(RECORD_OPERATION_OUTCOME, [
        tenantId,
        operation.id,
        'FAILED',
        outcome.code,
        null,
      ]);
      if (spec.listedOnPayment) await tx.query(NEXT_PAYMENT_VERSION, [tenantId, payment.id]);
    });
  }
  // The response needs the payment as this transaction leaves it; the key row is locked first
  // (finish's fence), so compute it inside and store it with the same commit.
  let response: JsonValue = null;
  return request.finishWith(async (tx) => {
    await tx.query(RECORD_OPERATION_OUTCOME, [
      tenantId,
      operation.id,
      'SUCCEEDED',
      null,
      outcome.providerReference,
    ]);
    const after = await spec.apply(tx, { tenantId, payment, operation });
    await publishOperationOutcome(tx, { tenantId, kind: spec.kind, payment: after, operation });
    const refunds =
      (await refundsOf(tx, { tenantId, paymentIds: [payment.id] })).get(payment.id) ?? [];
    const refund = spec.kind === 'refund' ? refunds.find((r) => r.id === operation.id) : undefined;
    response = {
      payment: toPaymentView(after, refunds),
      refund: refund === undefined ? null : toRefundView(refund, after.currency),
    };
    return response;
  });
}
