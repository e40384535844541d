import type { JsonValue } from '../../lib/canonical-json.ts';
import type { TxClient } from '../../lib/db/pool.ts';
import type { Statement } from '../../lib/db/pipelined-statements.ts';
import { eventStatement } from '../../lib/outbox/outbox.ts';
import { toPaymentView, type PaymentRow } from './payment.view.ts';

/**
 * The events a payment's phases make true, written in the same transaction as the phase. Each
 * has a stable id — the webhook-id merchants see, the same on every redelivery — and names its
 * consumers: the ledger for money that moved, receipts for money taken, webhooks for everything.
 */
export type PaymentEventType =
  | 'payment.succeeded'
  | 'payment.authorized'
  | 'payment.failed'
  | 'payment.captured'
  | 'payment.canceled'
  | 'refund.succeeded';

/** A movement of money the ledger posts once, under `postingId`. */
export interface Movement {
  [field: string]: JsonValue;
  kind: 'capture' | 'refund';
  postingId: string;
  amountMinor: string;
  currency: string;
}

/** Every type of event the payments service publishes: what a webhook endpoint may subscribe to. */
export const PAYMENT_EVENT_TYPES = [
  'payment.succeeded',
  'payment.authorized',
  'payment.failed',
  'payment.captured',
  'payment.canceled',
  'refund.succeeded',
] as const satisfies readonly PaymentEventType[];

const CONSUMERS: Record<PaymentEventType, string[]> = {
  'payment.succeeded': ['ledger', 'receipts', 'webhooks'],
  'payment.captured': ['ledger', 'receipts', 'webhooks'],
  'refund.succeeded': ['ledger', 'webhooks'],
  'payment.authorized': ['webhooks'],
  'payment.failed': ['webhooks'],
  'payment.canceled': ['webhooks'],
};

/**
 * The event of a createPayment that reached its outcome (or a settlement of one), as the
 * statement that writes it with its deliveries in the final phase's round trip.
 */
export function paymentOutcomeEvent(event: { tenantId: string; payment: PaymentRow }): Statement {
  const { payment } = event;
  const type: PaymentEventType =
    payment.status === 'SUCCEEDED'
      ? 'payment.succeeded'
      : payment.status === 'REQUIRES_CAPTURE'
        ? 'payment.authorized'
        : 'payment.failed';
  const movement = type === 'payment.succeeded' ? captureMovement(payment) : null;
  return outboxEvent({
    tenantId: event.tenantId,
    id: `evt_payment_${payment.id}_${type.split('.')[1]}`,
    type,
    payment,
    movement,
  });
}

/** The event of a capture, refund or cancel that the provider applied. */
export async function publishOperationOutcome(
  tx: TxClient,
  event: {
    tenantId: string;
    kind: 'capture' | 'refund' | 'cancel';
    payment: PaymentRow;
    operation: { id: string; amount_minor: string | null };
  },
): Promise<void> {
  const { payment, operation } = event;
  switch (event.kind) {
    case 'capture':
      return publish(tx, {
        tenantId: event.tenantId,
        id: `evt_payment_${payment.id}_captured`,
        type: 'payment.captured',
        payment,
        movement: captureMovement(payment),
      });
    case 'cancel':
      return publish(tx, {
        tenantId: event.tenantId,
        id: `evt_payment_${payment.id}_canceled`,
        type: 'payment.canceled',
        payment,
        movement: null,
      });
    case 'refund':
      return publish(tx, {
        tenantId: event.tenantId,
        id: `evt_refund_${operation.id}_succeeded`,
        type: 'refund.succeeded',
        payment,
        movement: {
          kind: 'refund',
          postingId: `ledger_refund_${operation.id}`,
          amountMinor: operation.amount_minor ?? '0',
          currency: payment.currency,
        },
      });
  }
}

function captureMovement(payment: PaymentRow): Movement {
  return {
    kind: 'capture',
    postingId: `ledger_payment_${payment.id}_capture`,
    amountMinor: payment.amount_captured_minor,
    currency: payment.currency,
  };
}

async function publish(tx: TxClient, event: PaymentEvent): Promise<void> {
  const { text, values } = outboxEvent(event);
  await tx.query(text, values);
}

interface PaymentEvent {
  tenantId: string;
  id: string;
  type: PaymentEventType;
  payment: PaymentRow;
  movement: Movement | null;
}

function outboxEvent(event: PaymentEvent): Statement {
  return eventStatement({
    tenantId: event.tenantId,
    id: event.id,
    type: event.type,
    payload: { payment: toPaymentView(event.payment), movement: event.movement },
    consumers: CONSUMERS[event.type],
    // The fan-out exists for tenants with a webhook endpoint; others get no delivery for it.
    onSubscription: ['webhooks'],
  });
}
