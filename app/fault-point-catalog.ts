import { CANCEL_PAYMENT_FAULT_POINTS } from '../services/payments/index.ts';
import { CAPTURE_PAYMENT_FAULT_POINTS } from '../services/payments/index.ts';
import { CREATE_PAYMENT_FAULT_POINTS } from '../services/payments/index.ts';
import { REFUND_PAYMENT_FAULT_POINTS } from '../services/payments/index.ts';

/** The outbox's consumer kinds; each one's deliveries pass `outbox.<kind>.after-handle`. */
const OUTBOX_CONSUMER_KINDS = ['ledger', 'receipts', 'webhooks', 'webhook'] as const;

/**
 * Every fault point the process passes, by name: what FAULT_POINTS may arm. A test drives a whole
 * payment lifecycle and fails if the code passes a point missing here.
 */
export const FAULT_POINT_CATALOG: ReadonlySet<string> = new Set<string>([
  ...CREATE_PAYMENT_FAULT_POINTS,
  ...CAPTURE_PAYMENT_FAULT_POINTS,
  ...REFUND_PAYMENT_FAULT_POINTS,
  ...CANCEL_PAYMENT_FAULT_POINTS,
  ...OUTBOX_CONSUMER_KINDS.map((kind) => `outbox.${kind}.after-handle`),
]);
