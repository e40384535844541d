import type { PaymentsDeps } from './payments.deps.ts';
import type { PublicError } from '../../lib/errors.ts';
import { idempotencyInfo, type IdempotencyInfo } from '../../lib/idempotency/idempotency-key.ts';
import type { OperationDef } from '../../lib/idempotency/operation.ts';
import { currentBody } from '../../lib/idempotency/stored-answer.ts';
import type { StoredAnswer } from '../../lib/idempotency/types.ts';
import { z } from 'zod';
import { refundsOf } from './payment-rows.ts';
import {
  paymentViewSchema,
  refundViewSchema,
  toPaymentView,
  toRefundView,
  type PaymentRow,
  type PaymentView,
  type RefundView,
} from './payment.view.ts';
import { SELECT_OPERATION, SELECT_PAYMENT } from './payments.sql.ts';
import { paymentAnswerReader } from './stored-answers.ts';

/*
 * What a capture, refund or cancel answers, and how a stored answer is read back: the
 * operation's row and payment, and the answer in today's shape.
 */

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

const storedAnswer = z.union([
  z.object({ payment: paymentViewSchema, refund: refundViewSchema.nullable() }),
  z.object({ error: z.object({ code: z.string(), message: z.string() }) }),
]);

export async function loadOperation(
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

/** A finished operation's answer as the caller gets it: the stored one, in today's shape. */
export async function operationAnswer(
  deps: PaymentsDeps,
  stored: StoredAnswer,
  info: { operation: OperationDef; tenantId: string; key: string; replayed: boolean },
): Promise<OperationResult> {
  const { tenantId } = info;
  const reader = paymentAnswerReader(deps.pool, {
    tenantId,
    firstRequestAt: stored.firstRequestAt,
    // An answer over the size cap (a payment with very many refunds): rendered as it is now.
    render: async (operationId) => {
      const { payment, operation } = await loadOperation(deps, { tenantId, operationId });
      const refunds =
        (await refundsOf(deps.pool, { tenantId, paymentIds: [payment.id] })).get(payment.id) ?? [];
      const refund = refunds.find((r) => r.id === operation.id);
      return {
        payment: toPaymentView(payment, refunds),
        refund: refund === undefined ? null : toRefundView(refund, payment.currency),
      };
    },
  });
  const body = storedAnswer.parse(await currentBody(info.operation, stored, reader));
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
