import { randomUUID } from 'node:crypto';
import {
  assertIdempotencyKey,
  idempotencyInfo,
  type IdempotencyInfo,
} from '../kernel/idempotency/idempotency-key.ts';
import { z } from 'zod';
import type { PaymentsDeps } from '../context.ts';
import type { JsonValue } from '../kernel/canonical-json.ts';
import type { TxClient } from '../kernel/db/pool.ts';
import {
  AppError,
  KERNEL_ERRORS,
  LeaseLostError,
  publicError,
  type PublicError,
} from '../kernel/errors.ts';
import { PAYMENT_ERRORS, type PaymentRefusal } from './payments.errors.ts';
import { notAdmitted } from '../kernel/idempotency/not-admitted.ts';
import { assertFreeText, assertEncodableText } from '../kernel/input/free-text.ts';
import type { OperationDef } from '../kernel/idempotency/operation.ts';
import type { OwnedRequest } from '../kernel/idempotency/owned-request.ts';
import type { Resumer } from '../kernel/idempotency/recovery-worker.ts';
import type { StoredResponse } from '../kernel/idempotency/types.ts';
import { providerOperationKey } from '../provider/index.ts';
import type { ChargeOperationOutcome } from '../provider/index.ts';
import { publishOperationOutcome } from './payment-events.ts';
import { refundsOf } from './payment-rows.ts';
import { paymentAnswerReader } from './stored-answers.ts';
import { currentBody } from '../kernel/idempotency/stored-response.ts';
import {
  INSERT_OPERATION,
  RECORD_OPERATION_OUTCOME,
  SELECT_OPERATION,
  SELECT_PAYMENT,
  SELECT_PAYMENT_FOR_UPDATE,
} from './payments.sql.ts';
import {
  paymentViewSchema,
  refundViewSchema,
  toPaymentView,
  toRefundView,
  type PaymentRow,
  type PaymentView,
  type RefundView,
} from './payment.view.ts';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const REASON_MAX_CHARS = 255;

/**
 * An operation on an existing payment whose effect is one provider call (capture, cancel, refund):
 *
 *   admission + payment locked + rules checked + operation row (the intent) ──▶ <sentPoint>
 *   ──(provider call, the operation's derived key)──▶ outcome + payment + stored response ──▶ finished
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

export interface OperationCommand {
  [field: string]: JsonValue;
  paymentId: string;
  /** Canonical decimal ("10.5" for "10.50"), or null for "all of it". */
  amount: string | null;
  reason: string | null;
}

export const operationInput = z.strictObject({
  tenantId: z.uuid(),
  idempotencyKey: z.string(),
  paymentId: z.string(),
  amount: z.string().nullish(),
  reason: z.string().nullish(),
});
export type OperationInput = z.infer<typeof operationInput>;

export type OperationResult =
  | {
      ok: true;
      payment: PaymentView;
      refund: RefundView | null;
      idempotency: IdempotencyInfo;
    }
  | { ok: false; error: PublicError; replayed: boolean };

export interface OperationRow {
  id: string;
  payment_id: string;
  kind: string;
  amount_minor: string | null;
  provider_key: string;
  reason: string | null;
  status: 'PROCESSING' | 'SUCCEEDED' | 'FAILED';
  created_at: Date;
}

const storedResponse = z.union([
  z.object({ payment: paymentViewSchema, refund: refundViewSchema.nullable() }),
  z.object({ error: z.object({ code: z.string(), message: z.string() }) }),
]);

export async function runPaymentOperation(
  deps: PaymentsDeps,
  run: { spec: PaymentOperationSpec; input: OperationInput },
): Promise<OperationResult> {
  const { spec, input } = run;
  const operationId = randomUUID();
  let known: { payment: PaymentRow; operation: OperationRow } | undefined;
  let admission;
  try {
    deps.engine.checkKey(spec.operation, input.idempotencyKey);
    const command = normaliseOperation(input);
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
    // Input errors (and only those) are answered without storing anything for the key.
    if (error instanceof AppError) return { ok: false, error: error.toPublic(), replayed: false };
    throw error;
  }
  const key = input.idempotencyKey;
  switch (admission.kind) {
    case 'replay':
      return answer(deps, admission.response, {
        spec,
        tenantId: input.tenantId,
        key,
        replayed: true,
      });
    case 'decided':
      return answer(deps, admission.response, {
        spec,
        tenantId: input.tenantId,
        key,
        replayed: false,
      });
    case 'reused':
    case 'in_use':
    case 'unknown':
      return notAdmitted(admission);
    case 'owned': {
      const driven = await driveOperation(deps, {
        spec,
        request: admission.request,
        known: admission.via === 'new' ? known : undefined,
      });
      return 'error' in driven
        ? { ok: false, error: driven.error, replayed: false }
        : answer(deps, driven.stored, { spec, tenantId: input.tenantId, key, replayed: false });
    }
  }
}

export function paymentOperationResumer(deps: PaymentsDeps, spec: PaymentOperationSpec): Resumer {
  return {
    operation: spec.operation,
    resume: (request, trace) =>
      driveOperation(deps.forTrace(trace), { spec, request, known: undefined }),
  };
}

export function normaliseOperation(input: OperationInput): OperationCommand {
  assertIdempotencyKey(input.idempotencyKey);
  const reason = input.reason ?? null;
  if (reason !== null && (reason.length === 0 || reason.length > REASON_MAX_CHARS)) {
    throw new AppError(KERNEL_ERRORS.BAD_USER_INPUT, {
      message: `reason must be 1 to ${REASON_MAX_CHARS} characters`,
      details: { field: 'reason' },
    });
  }
  assertFreeText('reason', reason);
  assertEncodableText('paymentId', input.paymentId);
  const raw = input.amount ?? null;
  if (raw === null) return { paymentId: input.paymentId.toLowerCase(), amount: null, reason };
  const match = /^(\d{1,18})(?:\.(\d{1,4}))?$/.exec(raw.trim());
  if (!match) {
    throw new AppError(KERNEL_ERRORS.BAD_USER_INPUT, {
      message: 'amount must be a decimal string such as "10.50"',
      details: { field: 'amount' },
    });
  }
  const whole = BigInt(match[1] ?? '0').toString();
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  return {
    paymentId: input.paymentId.toLowerCase(),
    amount: fraction === '' ? whole : `${whole}.${fraction}`,
    reason,
  };
}

async function admitOperation(
  tx: TxClient,
  admit: {
    spec: PaymentOperationSpec;
    tenantId: string;
    operationId: string;
    command: OperationCommand;
  },
): Promise<{ refuse: PaymentRefusal } | { payment: PaymentRow; operation: OperationRow }> {
  const { spec, tenantId, operationId, command } = admit;
  if (!UUID_PATTERN.test(command.paymentId)) return { refuse: PAYMENT_ERRORS.PAYMENT_NOT_FOUND };
  const { rows } = await tx.query<PaymentRow>(SELECT_PAYMENT_FOR_UPDATE, [
    tenantId,
    command.paymentId,
  ]);
  const payment = rows[0];
  if (payment === undefined) return { refuse: PAYMENT_ERRORS.PAYMENT_NOT_FOUND };
  const checked = await spec.check(tx, { tenantId, payment, command });
  if ('refuse' in checked) return checked;
  const inserted = await tx.query<OperationRow>(INSERT_OPERATION, [
    tenantId,
    operationId,
    payment.id,
    spec.kind,
    checked.amountMinor,
    providerOperationKey(spec.providerKind, operationId),
    command.reason,
  ]);
  return { payment, operation: inserted.rows[0]! };
}

async function driveOperation(
  deps: PaymentsDeps,
  run: {
    spec: PaymentOperationSpec;
    request: OwnedRequest;
    known: { payment: PaymentRow; operation: OperationRow } | undefined;
  },
): Promise<{ stored: StoredResponse } | { error: PublicError }> {
  const { spec, request } = run;
  const { publicName } = spec.operation;
  const { payment, operation } =
    run.known ??
    (await load(deps, { tenantId: request.scope.tenantId, operationId: request.resourceId ?? '' }));
  await deps.faults.hit(`${publicName}.provider_call.before-call`);
  let outcome: ChargeOperationOutcome;
  try {
    outcome = await deps.provider.operate({
      operationId: operation.id,
      kind: spec.providerKind,
      chargeId: payment.provider_reference ?? '',
      amountMinor: operation.amount_minor,
      currency: payment.currency,
      reason: operation.reason,
    });
  } catch (error) {
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
    case 'timeout':
      await request.release('timeout');
      return {
        error: publicError(PAYMENT_ERRORS.OUTCOME_PENDING, {
          retryAfterSeconds: 1,
          paymentId: payment.id,
        }),
      };
    case 'applied':
    case 'refused':
      try {
        return {
          stored: await finishOperation(deps, { spec, request, payment, operation, outcome }),
        };
      } catch (error) {
        if (error instanceof LeaseLostError)
          return {
            error: publicError(KERNEL_ERRORS.IDEMPOTENCY_KEY_IN_USE, { retryAfterSeconds: 1 }),
          };
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
): Promise<StoredResponse> {
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

async function load(
  deps: PaymentsDeps,
  ids: { tenantId: string; operationId: string },
): Promise<{ payment: PaymentRow; operation: OperationRow }> {
  const op = await deps.pool.query<OperationRow>(SELECT_OPERATION, [ids.tenantId, ids.operationId]);
  const operation = op.rows[0];
  if (operation === undefined)
    throw new Error(`operation ${ids.operationId} of an admitted request is missing`);
  const pay = await deps.pool.query<PaymentRow>(SELECT_PAYMENT, [
    ids.tenantId,
    operation.payment_id,
  ]);
  if (pay.rows[0] === undefined) throw new Error(`payment ${operation.payment_id} is missing`);
  return { payment: pay.rows[0], operation };
}

async function answer(
  deps: PaymentsDeps,
  stored: StoredResponse,
  info: { spec: PaymentOperationSpec; tenantId: string; key: string; replayed: boolean },
): Promise<OperationResult> {
  const { tenantId } = info;
  const reader = paymentAnswerReader(deps.pool, {
    tenantId,
    // An answer over the size cap (a payment with very many refunds): rendered as it is now.
    render: async (operationId) => {
      const { payment, operation } = await load(deps, { tenantId, operationId });
      const refunds =
        (await refundsOf(deps.pool, { tenantId, paymentIds: [payment.id] })).get(payment.id) ?? [];
      const refund = refunds.find((r) => r.id === operation.id);
      return {
        payment: toPaymentView(payment, refunds),
        refund: refund === undefined ? null : toRefundView(refund, payment.currency),
      };
    },
  });
  const body = storedResponse.parse(await currentBody(info.spec.operation, stored, reader));
  if ('error' in body) {
    return {
      ok: false,
      error: { code: body.error.code, message: body.error.message },
      replayed: info.replayed,
    };
  }
  return {
    ok: true,
    payment: body.payment,
    refund: body.refund,
    idempotency: idempotencyInfo(stored, info),
  };
}
