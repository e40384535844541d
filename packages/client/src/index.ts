/**
 * @payments-gateway/client: the merchant SDK of the payments gateway (docs/api.md §6).
 * Runtime dependencies: graphql, and the platform's fetch and crypto.randomUUID. What needs
 * Node has an entry point of its own: the file-backed key store
 * (`@payments-gateway/client/file-key-store`) and verifyWebhook
 * (`@payments-gateway/client/webhooks`).
 */
export {
  createPaymentsClient,
  type Balance,
  type CancelPaymentResult,
  type CapturePaymentResult,
  type CreatePaymentResult,
  type DeleteWebhookEndpointResult,
  type PaymentConnection,
  type PaymentsClient,
  type RedeliverWebhookEventResult,
  type RefundPaymentResult,
  type RegisterWebhookEndpointResult,
  type RotateWebhookSecretResult,
  type SendTestWebhookEventResult,
  type Unkeyed,
  type UpdateWebhookEndpointResult,
  type WebhookDeliveryConnection,
} from './payments-client.ts';
export type { CallOptions, MutationOptions, PaymentsClientOptions } from './client-options.ts';
export type { AttemptReport } from './call-with-retries.ts';
export type { BackoffOptions } from './backoff.ts';
export type { FetchLike, FetchResponseLike } from './send-attempt.ts';
export { createMemoryKeyStore, type KeyStore } from './key-store.ts';
export { paymentsTypePolicies, type PaymentKeyContext } from './apollo-type-policies.ts';
export {
  PaymentsApiError,
  type ClientErrorCode,
  type GatewayErrorCode,
  type PaymentsApiErrorDetails,
  type PaymentsErrorCode,
} from './payments-api-error.ts';
/** The typed documents the methods send, for `request()` and for tools that want them. */
export {
  BalancesDocument,
  CancelPaymentDocument,
  CapturePaymentDocument,
  CreatePaymentDocument,
  DeleteWebhookEndpointDocument,
  PaymentDocument,
  PaymentsDocument,
  RedeliverWebhookEventDocument,
  RefundPaymentDocument,
  RegisterWebhookEndpointDocument,
  RotateWebhookSecretDocument,
  SendTestWebhookEventDocument,
  UpdateWebhookEndpointDocument,
  WebhookDeliveriesDocument,
  WebhookEndpointsDocument,
} from './generated/graphql.ts';
export type {
  PaymentFieldsFragment as Payment,
  RefundFieldsFragment as Refund,
  IdempotencyFieldsFragment as IdempotencyInfo,
  WebhookEndpointFieldsFragment as WebhookEndpoint,
  WebhookEndpointSummaryFieldsFragment as WebhookEndpointSummary,
  WebhookDeliveryFieldsFragment as WebhookDelivery,
  CaptureMethod,
  PaymentStatus,
  RefundStatus,
  CreatePaymentInput,
  CapturePaymentInput,
  RefundPaymentInput,
  CancelPaymentInput,
  RegisterWebhookEndpointInput,
  UpdateWebhookEndpointInput,
  DeleteWebhookEndpointInput,
  RotateWebhookSecretInput,
  RedeliverWebhookEventInput,
  SendTestWebhookEventInput,
  PaymentsQueryVariables,
  WebhookDeliveriesQueryVariables,
} from './generated/graphql.ts';
