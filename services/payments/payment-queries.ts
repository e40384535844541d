import { z } from 'zod';
import type { Queryable } from '../kernel/db/pool.ts';
import { InputInvalidError } from '../kernel/errors.ts';
import { assertNoControlCharacters } from '../kernel/input/free-text.ts';
import type { Keyring } from '../kernel/crypto/keyring.ts';
import { decodeCursor, encodeCursor } from './payment-cursor.ts';
import { LIST_PAYMENTS, SELECT_PAYMENT, SELECT_REFUNDS } from './payments.sql.ts';
import {
  toPaymentView,
  type PaymentRow,
  type PaymentView,
  type RefundRow,
} from './payment.view.ts';

/** Page sizes beyond this are refused rather than clamped, so a client never silently gets less. */
const MAX_PAGE_SIZE = 100;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const listPaymentsInput = z.object({
  tenantId: z.uuid(),
  first: z.number().int(),
  after: z.string().nullish(),
  reference: z.string().nullish(),
});

/** A payment of this tenant, or null: another tenant's payment is indistinguishable from none. */
export async function getPayment(
  pool: Queryable,
  input: { tenantId: string; id: string },
): Promise<PaymentView | null> {
  if (!UUID_PATTERN.test(input.id)) return null;
  const { rows } = await pool.query<PaymentRow>(SELECT_PAYMENT, [
    input.tenantId,
    input.id.toLowerCase(),
  ]);
  if (rows[0] === undefined) return null;
  const refunds = await refundsOf(pool, { tenantId: input.tenantId, paymentIds: [rows[0].id] });
  return toPaymentView(rows[0], refunds.get(rows[0].id));
}

export interface PaymentPage {
  edges: Array<{ cursor: string; node: PaymentView }>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** Throws InputInvalidError for a bad page size or cursor. */
export async function listPayments(
  deps: { pool: Queryable; keyring: Keyring },
  input: z.infer<typeof listPaymentsInput>,
): Promise<PaymentPage> {
  const { pool, keyring } = deps;
  if (input.first < 1 || input.first > MAX_PAGE_SIZE) {
    throw new InputInvalidError('first', `first must be between 1 and ${MAX_PAGE_SIZE}`);
  }
  assertNoControlCharacters('reference', input.reference);
  const cursor = input.after ? decodeCursor(keyring, input.tenantId, input.after) : null;
  const { rows } = await pool.query<PaymentRow & { created_us: string }>(LIST_PAYMENTS, [
    input.tenantId,
    input.first + 1,
    cursor?.createdUs ?? null,
    cursor?.id ?? null,
    input.reference ?? null,
  ]);
  const page = rows.slice(0, input.first);
  const refunds = await refundsOf(pool, {
    tenantId: input.tenantId,
    paymentIds: page.map((row) => row.id),
  });
  const edges = page.map((row) => ({
    cursor: encodeCursor(keyring, input.tenantId, { createdUs: row.created_us, id: row.id }),
    node: toPaymentView(row, refunds.get(row.id)),
  }));
  return {
    edges,
    pageInfo: { hasNextPage: rows.length > input.first, endCursor: edges.at(-1)?.cursor ?? null },
  };
}

/** The refunds of several payments in one query, by payment id. */
export async function refundsOf(
  pool: Queryable,
  ids: { tenantId: string; paymentIds: string[] },
): Promise<Map<string, RefundRow[]>> {
  const byPayment = new Map<string, RefundRow[]>();
  if (ids.paymentIds.length === 0) return byPayment;
  const { rows } = await pool.query<RefundRow>(SELECT_REFUNDS, [ids.tenantId, ids.paymentIds]);
  for (const row of rows)
    byPayment.set(row.payment_id, [...(byPayment.get(row.payment_id) ?? []), row]);
  return byPayment;
}
