/** The notifications service's contract: the types the composition needs, without its router. */
export type { WebhookEgress } from './webhook-egress.client.ts';
export type { NotificationsDeps } from './notifications.deps.ts';
/**
 * The largest page `webhookDeliveries(first:)` serves: a larger one is refused rather than
 * clamped. The gateway's document cost counts a page by it.
 */
export const WEBHOOK_DELIVERIES_MAX_PAGE_SIZE = 100;
