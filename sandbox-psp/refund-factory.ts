// Builds the refund for an applied refund request (the store stamps createdAt).
import { randomBytes } from 'node:crypto';
import type { RefundDraft } from './operation-types.ts';

/** Random bytes in a refund id: 96 bits, like charge ids, so ids never collide in a run. */
const REFUND_ID_RANDOM_BYTES = 12;

export function buildRefund(input: {
  chargeId: string;
  /** Already written at the charge's scale. */
  amount: string;
  reason: string | null;
  idempotencyKey: string;
}): RefundDraft {
  return {
    id: `re_${randomBytes(REFUND_ID_RANDOM_BYTES).toString('hex')}`,
    chargeId: input.chargeId,
    amount: input.amount,
    status: 'succeeded',
    reason: input.reason,
    idempotencyKey: input.idempotencyKey,
  };
}
