import type { BatchDeliveryHandler, Delivery } from '../../lib/outbox/delivery.ts';
import type { Movement } from './post-movements.ts';

interface MovementPayload {
  payment?: { id?: string };
  movement?: {
    kind: 'capture' | 'refund';
    postingId: string;
    amountMinor: string;
    currency: string;
  } | null;
}

/** The movement an event carries, or null for an event that moves no money. */
function movementOf(delivery: Delivery): Movement | null {
  const { payment, movement } = delivery.event.payload as MovementPayload;
  if (movement === null || movement === undefined || payment?.id === undefined) return null;
  return {
    tenantId: delivery.tenantId,
    postingId: movement.postingId,
    paymentId: payment.id,
    kind: movement.kind,
    currency: movement.currency,
    amountMinor: movement.amountMinor,
  };
}

/**
 * The outbox consumer that posts money movements to the ledger service, a claim's worth in one
 * call and one transaction. Delivered at least once; the posting ids make each movement post
 * once. If the call fails, the dispatcher hands each delivery over alone.
 */
export function ledgerHandler(ledger: {
  postMany(movements: Movement[]): Promise<unknown>;
}): BatchDeliveryHandler {
  return async (deliveries) => {
    const movements = deliveries.map(movementOf).filter((m) => m !== null);
    if (movements.length > 0) await ledger.postMany(movements);
    return deliveries.map(() => ({ kind: 'delivered' }));
  };
}
