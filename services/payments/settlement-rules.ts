import type { TxClient } from '../../lib/db/pool.ts';
import { PAYMENT_ERRORS, type PaymentRefusal } from './payments.errors.ts';
import { APPLY_SETTLEMENT, SELECT_ACTIVE_SETTLEMENT } from './payments.sql.ts';
import type { PaymentRow } from './payment.view.ts';

/**
 * Whether a payment may still be captured or canceled: authorised, and neither captured nor
 * canceled, nor being so under another key. Run under the payment's row lock; the partial
 * unique index payment_operations_one_settlement_uq is the backstop.
 */
export async function settlementRefusal(
  tx: TxClient,
  target: { tenantId: string; payment: PaymentRow },
): Promise<PaymentRefusal | null> {
  const { tenantId, payment } = target;
  if (payment.status !== 'REQUIRES_CAPTURE') return PAYMENT_ERRORS.INVALID_PAYMENT_STATE;
  const active = await tx.query(SELECT_ACTIVE_SETTLEMENT, [tenantId, payment.id]);
  return (active.rowCount ?? 0) > 0 ? PAYMENT_ERRORS.INVALID_PAYMENT_STATE : null;
}

/** Records a capture's or cancel's success on the payment; returns the payment after. */
export async function applySettlement(
  tx: TxClient,
  change: {
    tenantId: string;
    payment: PaymentRow;
    status: 'SUCCEEDED' | 'CANCELED';
    capturedMinor: string;
  },
): Promise<PaymentRow> {
  const { payment } = change;
  const { rows } = await tx.query<PaymentRow>(APPLY_SETTLEMENT, [
    change.tenantId,
    payment.id,
    change.status,
    change.capturedMinor,
  ]);
  if (rows[0] === undefined)
    throw new Error(`payment ${payment.id} left REQUIRES_CAPTURE before its ${change.status}`);
  return rows[0];
}
