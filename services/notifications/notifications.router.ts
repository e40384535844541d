import { z } from 'zod';
import { serviceTrpc } from '../trpc.ts';
import type { NotificationsDeps } from './notifications.deps.ts';
import { endpointInput } from './endpoint-command.ts';
import {
  deleteEndpoint,
  listDeliveries,
  listDeliveriesInput,
  listEndpoints,
  redeliverEvent,
  redeliverInput,
  rotateSecret,
  rotateSecretInput,
  updateEndpoint,
  updateEndpointInput,
} from './manage-endpoints.flow.ts';
import { registerEndpoint, registerEndpointInput } from './register-endpoint.flow.ts';
import { sendTestEvent, sendTestEventInput } from './send-test-event.flow.ts';

/** Its procedures see only what it declares (notifications.deps.ts), in the whole stack or alone. */
const { router, procedure } = serviceTrpc<{ deps: NotificationsDeps }>();

/** The notifications service: webhook endpoints, and (as outbox consumers) deliveries and receipts. */
export const notificationsRouter = router({
  registerEndpoint: procedure
    .input(registerEndpointInput)
    .mutation(({ ctx, input }) => registerEndpoint(ctx.deps, input)),
  updateEndpoint: procedure
    .input(updateEndpointInput)
    .mutation(({ ctx, input }) => updateEndpoint(ctx.deps, input)),
  deleteEndpoint: procedure
    .input(endpointInput)
    .mutation(({ ctx, input }) => deleteEndpoint(ctx.deps, input)),
  rotateSecret: procedure
    .input(rotateSecretInput)
    .mutation(({ ctx, input }) => rotateSecret(ctx.deps, input)),
  redeliverEvent: procedure
    .input(redeliverInput)
    .mutation(({ ctx, input }) => redeliverEvent(ctx.deps, input)),
  sendTestEvent: procedure
    .input(sendTestEventInput)
    .mutation(({ ctx, input }) => sendTestEvent(ctx.deps, input)),
  listEndpoints: procedure
    .input(z.strictObject({ tenantId: z.uuid() }))
    .query(({ ctx, input }) => listEndpoints(ctx.deps, input.tenantId)),
  listDeliveries: procedure
    .input(listDeliveriesInput)
    .query(({ ctx, input }) => listDeliveries(ctx.deps, input)),
});
