import type { PaymentsDeps } from './payments.deps.ts';
import type { PublicError } from '../../lib/errors.ts';
import { idempotencyInfo, type IdempotencyInfo } from '../../lib/idempotency/idempotency-key.ts';
import type { OperationDef } from '../../lib/idempotency/operation.ts';
import { currentBody } from '../../lib/idempotency/stored-answer.ts';
import type { StoredAnswer } from '../../lib/idempotency/types.ts';
import { z } from 'zod';
import { paymentViewOf } from './payment-rows.ts';
import { paymentViewSchema, type PaymentView } from './payment.view.ts';
import { paymentAnswerReader } from './stored-answers.ts';

/** What createPayment answers: the payment as stored for the key, or a refusal not stored. */
export type CreatePaymentResult =
  | { ok: true; payment: PaymentView; idempotency: IdempotencyInfo }
  | { ok: false; error: PublicError };

const storedAnswer = z.object({ payment: paymentViewSchema });

export async function createPaymentAnswer(
  deps: PaymentsDeps,
  stored: StoredAnswer,
  info: { operation: OperationDef; tenantId: string; key: string; replayed: boolean },
): Promise<CreatePaymentResult> {
  const reader = paymentAnswerReader(deps.pool, {
    tenantId: info.tenantId,
    firstRequestAt: stored.firstRequestAt,
    render: async (paymentId) => ({
      payment: await paymentViewOf(deps.pool, { tenantId: info.tenantId, id: paymentId }),
    }),
  });
  const body = storedAnswer.parse(await currentBody(info.operation, stored, reader));
  return {
    ok: true,
    payment: body.payment,
    idempotency: idempotencyInfo(stored, info),
  };
}
