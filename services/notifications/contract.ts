/** The notifications service's contract: the types the composition needs, without its router. */
export type { WebhookEgress } from './webhook-egress.client.ts';
export type { NotificationsDeps } from './notifications.deps.ts';
