import type { DeliveryHandler } from '../kernel/outbox/dispatcher.ts';
import type { ServiceCaller } from '../router.ts';

interface MovementPayload {
  payment?: { id?: string };
  movement?: {
    kind: 'capture' | 'refund';
    postingId: string;
    amountMinor: string;
    currency: string;
  } | null;
}

/**
 * The outbox consumer that posts money movements to the ledger service. Delivered at least once;
 * the ledger's inbox and posting ids make each movement post once.
 */
export function ledgerHandler(services: ServiceCaller): DeliveryHandler {
  return async (delivery) => {
    const { payment, movement } = delivery.event.payload as MovementPayload;
    if (movement === null || movement === undefined || payment?.id === undefined)
      return { kind: 'delivered' };
    await services.ledger.post({
      tenantId: delivery.tenantId,
      messageId: delivery.eventId,
      postingId: movement.postingId,
      paymentId: payment.id,
      kind: movement.kind,
      currency: movement.currency,
      amountMinor: movement.amountMinor,
    });
    return { kind: 'delivered' };
  };
}
