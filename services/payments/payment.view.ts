import { z } from 'zod';
import type { JsonValue } from '../../lib/canonical-json.ts';
import { formatAmount } from '../../lib/money/money.ts';

export type PaymentStatus = 'PROCESSING' | 'REQUIRES_CAPTURE' | 'SUCCEEDED' | 'FAILED' | 'CANCELED';

export interface PaymentRow {
  id: string;
  status: PaymentStatus;
  amount_minor: string;
  currency: string;
  amount_captured_minor: string;
  amount_refunded_minor: string;
  payment_method: string;
  capture_method: 'AUTOMATIC' | 'MANUAL';
  reference: string | null;
  description: string | null;
  metadata: JsonValue;
  provider_key: string;
  provider_reference: string | null;
  failure_code: string | null;
  created_at: Date;
  /** The last change; never earlier than the one before (payments.sql.ts, NEXT_VERSION). */
  updated_at: Date;
  /** Counts the changes (migrations/0022). */
  version: number;
}

/** The public shape of a payment: what GraphQL serves and what a replay stores. */
export interface PaymentView {
  [field: string]: JsonValue;
  id: string;
  status: PaymentStatus;
  amount: string;
  currency: string;
  amountCaptured: string;
  amountRefunded: string;
  paymentMethod: string;
  captureMethod: 'AUTOMATIC' | 'MANUAL';
  reference: string | null;
  providerReference: string | null;
  failureCode: string | null;
  createdAt: string;
  refunds: JsonValue[];
  /** As the merchant sent them with createPayment: they never change. */
  description: string | null;
  metadata: JsonValue;
  /**
   * Which state of the payment this is (ADR 0041): higher is newer. 0 in answers stored before
   * versions were counted (stored-answers.ts, v2), older than every counted state.
   */
  version: number;
  /** When the payment entered this state (for version 0, a lower bound: see stored-answers.ts). */
  updatedAt: string;
}

export interface RefundRow {
  id: string;
  payment_id: string;
  amount_minor: string;
  status: 'PROCESSING' | 'SUCCEEDED' | 'FAILED';
  reason: string | null;
  created_at: Date;
}

export interface RefundView {
  [field: string]: JsonValue;
  id: string;
  paymentId: string;
  amount: string;
  status: 'PROCESSING' | 'SUCCEEDED' | 'FAILED';
  reason: string | null;
  createdAt: string;
}

export function toRefundView(row: RefundRow, currency: string): RefundView {
  return {
    id: row.id,
    paymentId: row.payment_id,
    amount: formatAmount(BigInt(row.amount_minor), currency),
    status: row.status,
    reason: row.reason,
    createdAt: row.created_at.toISOString(),
  };
}

/** The public shape of a payment with its refunds (oldest first). */
export function toPaymentView(row: PaymentRow, refunds: RefundRow[] = []): PaymentView {
  return {
    id: row.id,
    status: row.status,
    amount: formatAmount(BigInt(row.amount_minor), row.currency),
    currency: row.currency,
    amountCaptured: formatAmount(BigInt(row.amount_captured_minor), row.currency),
    amountRefunded: formatAmount(BigInt(row.amount_refunded_minor), row.currency),
    paymentMethod: row.payment_method,
    captureMethod: row.capture_method,
    reference: row.reference,
    providerReference: row.provider_reference,
    failureCode: row.failure_code,
    createdAt: row.created_at.toISOString(),
    refunds: refunds.map((refund) => toRefundView(refund, row.currency)),
    description: row.description,
    metadata: row.metadata,
    version: row.version,
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Parses a stored payment view back (stored data is checked, never cast). */
export const paymentViewSchema = z.object({
  id: z.string(),
  status: z.enum(['PROCESSING', 'REQUIRES_CAPTURE', 'SUCCEEDED', 'FAILED', 'CANCELED']),
  amount: z.string(),
  currency: z.string(),
  amountCaptured: z.string(),
  amountRefunded: z.string(),
  paymentMethod: z.string(),
  captureMethod: z.enum(['AUTOMATIC', 'MANUAL']),
  reference: z.string().nullable(),
  providerReference: z.string().nullable(),
  failureCode: z.string().nullable(),
  createdAt: z.string(),
  refunds: z.array(z.json()),
  description: z.string().nullable(),
  metadata: z.json(),
  version: z.number().int().nonnegative(),
  updatedAt: z.string(),
});

export const refundViewSchema = z.object({
  id: z.string(),
  paymentId: z.string(),
  amount: z.string(),
  status: z.enum(['PROCESSING', 'SUCCEEDED', 'FAILED']),
  reason: z.string().nullable(),
  createdAt: z.string(),
});
