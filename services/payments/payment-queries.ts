import type { InferEntity } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { JsonValue } from '../../lib/canonical-json.ts';
import { InputInvalidError } from '../../lib/errors.ts';
import { parseDateTime } from '../../lib/input/date-time.ts';
import { assertEncodableText } from '../../lib/input/free-text.ts';
import type { Keyring } from '../../lib/crypto/keyring.ts';
import { decodeCursor, encodeCursor } from './payment-cursor.ts';
import { PaymentOperation } from './payment-operation.entity.ts';
import { Payment } from './payment.entity.ts';
import {
  toPaymentView,
  type PaymentRow,
  type PaymentView,
  type RefundRow,
} from './payment.view.ts';
import { canonicalUuid } from '../../lib/input/uuid.ts';
import { PAYMENTS_MAX_PAGE_SIZE } from './contract.ts';

/**
 * The query API's reads (payments.router.ts), through the EntityManager: each call gets its own
 * fork, so nothing is cached across requests. The phases' reads stay SQL (payment-rows.ts).
 */

export const listPaymentsInput = z.strictObject({
  tenantId: z.uuid(),
  first: z.number().int(),
  after: z.string().nullish(),
  reference: z.string().nullish(),
  status: z.enum(['PROCESSING', 'REQUIRES_CAPTURE', 'SUCCEEDED', 'FAILED', 'CANCELED']).nullish(),
  createdAfter: z.string().nullish(),
  createdBefore: z.string().nullish(),
});

/**
 * A status filter reads at most this many payments, newest first, for each one a page asks
 * for; a page that finds fewer matches ends where its reading stopped, with hasNextPage, and
 * the next page goes on from there. An index on status would make each page read only matches,
 * but the outcome UPDATE writes status, and indexing it ends that update's HOT path on every
 * payment (ADR 0016, ADR 0023): a rare status costs its searcher more pages instead.
 */
export const STATUS_SCAN_FACTOR = 10;

/** A DateTime filter as the UTC instant PostgreSQL is given, or InputInvalidError naming it. */
function instantOf(field: string, raw: string | null | undefined): string | null {
  if (raw == null) return null;
  const parsed = parseDateTime(raw);
  if (!parsed.ok) throw new InputInvalidError(field, `${field} ${parsed.problem}`);
  return parsed.utc;
}

type PaymentEntity = InferEntity<typeof Payment>;

/** The entity in the row shape payment.view.ts renders (the phases' SQL returns that shape). */
function rowOf(payment: PaymentEntity): PaymentRow {
  return {
    id: payment.id,
    status: payment.status,
    amount_minor: payment.amountMinor,
    currency: payment.currency,
    amount_captured_minor: payment.amountCapturedMinor,
    amount_refunded_minor: payment.amountRefundedMinor,
    payment_method: payment.paymentMethod,
    capture_method: payment.captureMethod,
    reference: payment.reference ?? null,
    description: payment.description ?? null,
    metadata: (payment.metadata ?? null) as JsonValue,
    provider_key: payment.providerKey,
    provider_reference: payment.providerReference ?? null,
    failure_code: payment.failureCode ?? null,
    created_at: payment.createdAt,
    updated_at: payment.updatedAt,
    version: payment.version,
  };
}

/** A payment of this tenant, or null: another tenant's payment is indistinguishable from none. */
export async function getPayment(
  em: EntityManager,
  input: { tenantId: string; id: string },
): Promise<PaymentView | null> {
  const id = canonicalUuid(input.id);
  if (id === null) return null;
  const payment = await em.findOne(Payment, { tenantId: input.tenantId, id });
  if (payment === null) return null;
  const refunds = await refundsOf(em, { tenantId: input.tenantId, paymentIds: [payment.id] });
  return toPaymentView(rowOf(payment), refunds.get(payment.id));
}

export interface PaymentPage {
  edges: Array<{ cursor: string; node: PaymentView }>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/**
 * Newest first, keyset-paginated on (created_at, id) as payments_tenant_created_ix and
 * payments_tenant_reference_ix are ordered. The cursor carries created_at in whole microseconds
 * (Payment.createdUs): a JS Date would cut it to milliseconds and repeat rows across pages.
 * Throws InputInvalidError for a bad page size or cursor.
 */
export async function listPayments(
  deps: { em: EntityManager; keyring: Keyring },
  input: z.infer<typeof listPaymentsInput>,
): Promise<PaymentPage> {
  const { em, keyring } = deps;
  const read = paymentPageQuery(deps, input);
  const rows = await read.query.getResultList();
  const cursorOf = (payment: PaymentEntity) =>
    encodeCursor(keyring, input.tenantId, { createdUs: payment.createdUs, id: payment.id });
  let page: PaymentEntity[];
  let hasNextPage: boolean;
  let endCursor: string | null;
  if (input.status == null) {
    page = rows.slice(0, input.first);
    hasNextPage = rows.length > input.first;
    endCursor = page.length > 0 ? cursorOf(page.at(-1)!) : null;
  } else {
    const matches = rows.filter((payment) => payment.status === input.status);
    page = matches.slice(0, input.first);
    if (matches.length > input.first) {
      hasNextPage = true;
      endCursor = cursorOf(page.at(-1)!);
    } else {
      // Read all it may: the rest of the range is still unread, so the next page starts where
      // this one stopped reading, even with no match on this one.
      hasNextPage = rows.length === read.limit;
      const last = hasNextPage ? rows.at(-1) : page.at(-1);
      endCursor = last === undefined ? null : cursorOf(last);
    }
  }
  const refunds = await refundsOf(em, {
    tenantId: input.tenantId,
    paymentIds: page.map((payment) => payment.id),
  });
  const edges = page.map((payment) => ({
    cursor: cursorOf(payment),
    node: toPaymentView(rowOf(payment), refunds.get(payment.id)),
  }));
  return { edges, pageInfo: { hasNextPage, endCursor } };
}

/**
 * The query of one page: keyset on (created_at, id), newest first, on payments_tenant_created_ix
 * or (with a reference) payments_tenant_reference_ix, the created range as index bounds, and a
 * limit that keeps a page's reading in proportion to its size (STATUS_SCAN_FACTOR with a status).
 * Throws InputInvalidError for a bad page size, cursor, reference or range.
 */
export function paymentPageQuery(
  deps: { em: EntityManager; keyring: Keyring },
  input: z.infer<typeof listPaymentsInput>,
) {
  if (input.first < 1 || input.first > PAYMENTS_MAX_PAGE_SIZE) {
    throw new InputInvalidError('first', `first must be between 1 and ${PAYMENTS_MAX_PAGE_SIZE}`);
  }
  assertEncodableText('reference', input.reference);
  const createdAfter = instantOf('createdAfter', input.createdAfter);
  const createdBefore = instantOf('createdBefore', input.createdBefore);
  if (createdAfter !== null && createdBefore !== null) {
    if (Date.parse(createdAfter) >= Date.parse(createdBefore))
      throw new InputInvalidError('createdBefore', 'createdBefore must be after createdAfter');
  }
  const cursor = input.after ? decodeCursor(deps.keyring, input.tenantId, input.after) : null;
  const limit = input.status == null ? input.first + 1 : input.first * STATUS_SCAN_FACTOR + 1;
  const query = deps.em
    .createQueryBuilder(Payment, 'p')
    .where({ tenantId: input.tenantId })
    .orderBy({ createdAt: 'desc', id: 'desc' })
    .limit(limit);
  if (input.reference != null) query.andWhere({ reference: input.reference });
  if (createdAfter !== null) query.andWhere('p.created_at >= ?::timestamptz', [createdAfter]);
  if (createdBefore !== null) query.andWhere('p.created_at < ?::timestamptz', [createdBefore]);
  if (cursor !== null) {
    query.andWhere(
      `(p.created_at, p.id) < (timestamptz 'epoch' + ?::bigint * interval '1 microsecond', ?::uuid)`,
      [cursor.createdUs, cursor.id],
    );
  }
  return { query, limit };
}

/** The refunds of several payments in one query, by payment id, oldest first. */
export async function refundsOf(
  em: EntityManager,
  ids: { tenantId: string; paymentIds: string[] },
): Promise<Map<string, RefundRow[]>> {
  const byPayment = new Map<string, RefundRow[]>();
  if (ids.paymentIds.length === 0) return byPayment;
  const refunds = await em.find(
    PaymentOperation,
    {
      tenantId: ids.tenantId,
      payment: { $in: ids.paymentIds.map((id): [string, string] => [ids.tenantId, id]) },
      kind: 'refund',
    },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  for (const refund of refunds) {
    const row: RefundRow = {
      id: refund.id,
      payment_id: refund.payment.id,
      amount_minor: refund.amountMinor ?? '0',
      status: refund.status,
      reason: refund.reason ?? null,
      created_at: refund.createdAt,
    };
    byPayment.set(row.payment_id, [...(byPayment.get(row.payment_id) ?? []), row]);
  }
  return byPayment;
}
