import type { z } from 'zod';
import { timeOrderedId } from '../../lib/input/time-ordered-id.ts';
import { canonicalUuid } from '../../lib/input/uuid.ts';
import { writeEvent } from '../../lib/outbox/outbox.ts';
import { deliveryOf, type DeliveryRow } from './delivery-view.ts';
import {
  endpointCommand,
  endpointInput,
  managedOperation,
  refusal,
  type EndpointCommandResult,
} from './endpoint-command.ts';
import { SELECT_DELIVERY, SELECT_LIVE_ENDPOINT } from './manage-endpoints.sql.ts';
import type { NotificationsDeps } from './notifications.deps.ts';
import { NOTIFICATION_ERRORS } from './notifications.errors.ts';

export const SEND_TEST_WEBHOOK_EVENT = managedOperation(
  'webhooks.send-test.v1',
  'sendTestWebhookEvent',
);

/** The type of a test event: no payment's, so no endpoint subscribes to it by its types. */
export const WEBHOOK_TEST_EVENT_TYPE = 'webhook_endpoint.test';

export const sendTestEventInput = endpointInput;

/**
 * sendTestWebhookEvent: one signed test event to one endpoint, through the outbox like every
 * event, so it is signed, judged by the egress policy, retried and held by the endpoint's
 * circuit as a payment's would be, and listed in webhookDeliveries. The event and its one
 * delivery row commit with the key: a replay answers the stored delivery and writes nothing, so
 * a merchant retrying a lost answer gets one test event, not one per retry. The event id is
 * ours (time-ordered, never the client's key): the receiver's webhook-id.
 */
export function sendTestEvent(
  deps: NotificationsDeps,
  input: z.infer<typeof sendTestEventInput>,
): Promise<EndpointCommandResult> {
  return endpointCommand(deps, {
    operation: SEND_TEST_WEBHOOK_EVENT,
    tenantId: input.tenantId,
    idempotencyKey: input.idempotencyKey,
    validate: () => ({ endpointId: input.endpointId.toLowerCase() }),
    decide: async (tx) => {
      const id = canonicalUuid(input.endpointId);
      if (id === null) return refusal(NOTIFICATION_ERRORS.WEBHOOK_ENDPOINT_NOT_FOUND);
      const endpoint = await tx.query<{ status: string }>(SELECT_LIVE_ENDPOINT, [
        input.tenantId,
        id,
      ]);
      const status = endpoint.rows[0]?.status;
      if (status === undefined) return refusal(NOTIFICATION_ERRORS.WEBHOOK_ENDPOINT_NOT_FOUND);
      // A disabled endpoint's deliveries are abandoned unsent (delivery-handlers.ts).
      if (status !== 'enabled') return refusal(NOTIFICATION_ERRORS.WEBHOOK_ENDPOINT_DISABLED);
      const eventId = `evt_test_${timeOrderedId()}`;
      const consumer = `webhook:${id}`;
      await writeEvent(tx, {
        tenantId: input.tenantId,
        id: eventId,
        type: WEBHOOK_TEST_EVENT_TYPE,
        payload: { endpoint: { id } },
        consumers: [consumer],
      });
      const { rows } = await tx.query<DeliveryRow>(SELECT_DELIVERY, [
        input.tenantId,
        eventId,
        consumer,
      ]);
      if (rows[0] === undefined) throw new Error(`the test event ${eventId} has no delivery row`);
      return { delivery: deliveryOf(rows[0]) };
    },
  });
}
