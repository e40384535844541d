/**
 * @payments-gateway/client: the merchant SDK of the payments gateway (docs/api.md §6).
 * Runtime dependencies: graphql, and the platform's fetch and crypto.randomUUID. The file-backed
 * key store, which needs Node's file system, is `@payments-gateway/client/file-key-store`.
 */
export {
  createPaymentsClient,
  type Balance,
  type CancelPaymentResult,
  type CapturePaymentResult,
  type CreatePaymentResult,
  type PaymentConnection,
  type PaymentsClient,
  type RefundPaymentResult,
  type RegisterWebhookEndpointResult,
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
  PaymentDocument,
  PaymentsDocument,
  RefundPaymentDocument,
  RegisterWebhookEndpointDocument,
} from './generated/graphql.ts';
export type {
  PaymentFieldsFragment as Payment,
  RefundFieldsFragment as Refund,
  IdempotencyFieldsFragment as IdempotencyInfo,
  CaptureMethod,
  PaymentStatus,
  RefundStatus,
  CreatePaymentInput,
  CapturePaymentInput,
  RefundPaymentInput,
  CancelPaymentInput,
  RegisterWebhookEndpointInput,
  PaymentsQueryVariables,
} from './generated/graphql.ts';
