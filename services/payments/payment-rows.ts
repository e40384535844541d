import type { Queryable } from '../../lib/db/pool.ts';
import { SELECT_PAYMENT, SELECT_REFUNDS } from './payments.sql.ts';
import {
  toPaymentView,
  type PaymentRow,
  type PaymentView,
  type RefundRow,
} from './payment.view.ts';

/**
 * Reads the payment phases make on their own client: inside a phase's transaction (what it
 * answers must be what it committed) or while rendering a replayed answer. Hand-written SQL on
 * that client, not the EntityManager, whose separate pool could not see the open transaction
 * (ADR 0020). payment-queries.ts holds the same reads for the query API, through the EM.
 */

/** The refunds of several payments in one query, by payment id. */
export async function refundsOf(
  db: Queryable,
  ids: { tenantId: string; paymentIds: string[] },
): Promise<Map<string, RefundRow[]>> {
  const byPayment = new Map<string, RefundRow[]>();
  if (ids.paymentIds.length === 0) return byPayment;
  const { rows } = await db.query<RefundRow>(SELECT_REFUNDS, [ids.tenantId, ids.paymentIds]);
  for (const row of rows)
    byPayment.set(row.payment_id, [...(byPayment.get(row.payment_id) ?? []), row]);
  return byPayment;
}

/** A payment of this tenant with its refunds, or null. `id` is a payment id we minted. */
export async function paymentViewOf(
  db: Queryable,
  ids: { tenantId: string; id: string },
): Promise<PaymentView | null> {
  const { rows } = await db.query<PaymentRow>(SELECT_PAYMENT, [ids.tenantId, ids.id]);
  if (rows[0] === undefined) return null;
  const refunds = await refundsOf(db, { tenantId: ids.tenantId, paymentIds: [rows[0].id] });
  return toPaymentView(rows[0], refunds.get(rows[0].id));
}
