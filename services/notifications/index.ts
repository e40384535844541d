/** The notifications service's surface: what the rest of the house may import from it. */
export { resealSecrets, secretsByKey } from './reseal-secrets.ts';
export {
  parseWebhookAllowList,
  EMPTY_WEBHOOK_ALLOW_LIST,
  LOOPBACK_WEBHOOK_ALLOWED_HOSTS,
} from './webhook-url.policy.ts';
export type { WebhookAllowList } from './webhook-url.policy.ts';
export { notificationsRouter } from './notifications.router.ts';
export { createWebhookEgress } from './webhook-egress.client.ts';
export * from './contract.ts';
export { REGISTER_WEBHOOK_ENDPOINT } from './register-endpoint.flow.ts';
export { MANAGE_WEBHOOK_OPERATIONS } from './manage-endpoints.flow.ts';
export { notificationHandlers, receiptsHandler } from './delivery-handlers.ts';
/** Its tables' entities: the composition lists them (app/entities.ts) for the process's one ORM. */
export { Receipt } from './receipt.entity.ts';
export { WebhookEndpoint } from './webhook-endpoint.entity.ts';
export { NOTIFICATION_ERRORS } from './notifications.errors.ts';
