import { procedure, router } from '../trpc.ts';
import { registerEndpoint, registerEndpointInput } from './register-endpoint.flow.ts';

/** The notifications service: webhook endpoints, and (as outbox consumers) deliveries and receipts. */
export const notificationsRouter = router({
  registerEndpoint: procedure
    .input(registerEndpointInput)
    .mutation(({ ctx, input }) => registerEndpoint(ctx.deps, input)),
});
