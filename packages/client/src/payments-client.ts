/**
 * createPaymentsClient: the gateway's operations as typed methods (docs/api.md §6). Each
 * mutation is one logical call with one idempotency key, reused on every retry; each method
 * always sends its one generated document.
 *
 * Adding an operation (e.g. a mutation `sendTestWebhookEvent`) is four small steps:
 * 1. its document in operations.graphql, then `npm run codegen` (test/sdk/codegen-fresh.test.ts
 *    fails until the generated code is committed);
 * 2. its method in PaymentsClient, typed by the generated input and payload;
 * 3. one line in the client's table below: `mutation(TheDocument, 'rootField')` for a mutation
 *    (keyed, retried until final), `read(TheDocument, 'rootField')` for a query;
 * 4. its document and types exported from index.ts, and a test in test/sdk/.
 * The method's name is the schema's root field: `field` is both what the answer is read from
 * and what the SDK checks is present before it calls the answer a success.
 */
import type { DocumentNode, TypedQueryDocumentNode } from 'graphql';
import { callWithRetries } from './call-with-retries.ts';
import { claimCallKey } from './call-key.ts';
import {
  callSettings,
  resolveClientOptions,
  type CallOptions,
  type MutationOptions,
  type PaymentsClientOptions,
} from './client-options.ts';
import {
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
  type BalancesQuery,
  type CancelPaymentInput,
  type CancelPaymentMutation,
  type CapturePaymentInput,
  type CapturePaymentMutation,
  type CreatePaymentInput,
  type CreatePaymentMutation,
  type DeleteWebhookEndpointInput,
  type DeleteWebhookEndpointMutation,
  type PaymentQuery,
  type PaymentsQuery,
  type PaymentsQueryVariables,
  type RedeliverWebhookEventInput,
  type RedeliverWebhookEventMutation,
  type RefundPaymentInput,
  type RefundPaymentMutation,
  type RegisterWebhookEndpointInput,
  type RegisterWebhookEndpointMutation,
  type RotateWebhookSecretInput,
  type RotateWebhookSecretMutation,
  type SendTestWebhookEventInput,
  type SendTestWebhookEventMutation,
  type UpdateWebhookEndpointInput,
  type UpdateWebhookEndpointMutation,
  type WebhookDeliveriesQuery,
  type WebhookDeliveriesQueryVariables,
  type WebhookEndpointsQuery,
} from './generated/graphql.ts';
import { invalidRequest, PaymentsApiError } from './payments-api-error.ts';
import { createDocumentPreparer } from './prepared-document.ts';

/** A mutation's input without its key: the SDK sets `idempotencyKey` itself. */
export type Unkeyed<T> = Omit<T, 'idempotencyKey'>;

export type CreatePaymentResult = CreatePaymentMutation['createPayment'];
export type CapturePaymentResult = CapturePaymentMutation['capturePayment'];
export type RefundPaymentResult = RefundPaymentMutation['refundPayment'];
export type CancelPaymentResult = CancelPaymentMutation['cancelPayment'];
export type RegisterWebhookEndpointResult =
  RegisterWebhookEndpointMutation['registerWebhookEndpoint'];
export type UpdateWebhookEndpointResult = UpdateWebhookEndpointMutation['updateWebhookEndpoint'];
export type DeleteWebhookEndpointResult = DeleteWebhookEndpointMutation['deleteWebhookEndpoint'];
export type RotateWebhookSecretResult = RotateWebhookSecretMutation['rotateWebhookSecret'];
export type RedeliverWebhookEventResult = RedeliverWebhookEventMutation['redeliverWebhookEvent'];
export type SendTestWebhookEventResult = SendTestWebhookEventMutation['sendTestWebhookEvent'];
export type PaymentConnection = PaymentsQuery['payments'];
export type Balance = BalancesQuery['balances'][number];
export type WebhookDeliveryConnection = WebhookDeliveriesQuery['webhookDeliveries'];

/**
 * Every method either returns the gateway's answer or throws a PaymentsApiError. A declined
 * card is an answer, not an error: createPayment returns the payment with `status: 'FAILED'`
 * and a `failureCode` (CARD_DECLINED, ...). Check `payment.status` before fulfilling an order.
 */
export interface PaymentsClient {
  /**
   * Charges (AUTOMATIC) or authorises (MANUAL) a payment. A decline is returned, not thrown:
   * `payment.status` is 'FAILED' with `payment.failureCode`. OUTCOME_PENDING after every
   * attempt is thrown (retryable, with `paymentId`): the charge may still happen.
   */
  createPayment(
    input: Unkeyed<CreatePaymentInput>,
    options?: MutationOptions,
  ): Promise<CreatePaymentResult>;
  capturePayment(
    input: Unkeyed<CapturePaymentInput>,
    options?: MutationOptions,
  ): Promise<CapturePaymentResult>;
  refundPayment(
    input: Unkeyed<RefundPaymentInput>,
    options?: MutationOptions,
  ): Promise<RefundPaymentResult>;
  cancelPayment(
    input: Unkeyed<CancelPaymentInput>,
    options?: MutationOptions,
  ): Promise<CancelPaymentResult>;
  /** The answer holds the endpoint's signing secret (`whsec_…`): keep it for verifyWebhook. */
  registerWebhookEndpoint(
    input: Unkeyed<RegisterWebhookEndpointInput>,
    options?: MutationOptions,
  ): Promise<RegisterWebhookEndpointResult>;
  /**
   * Enables or disables an endpoint, or chooses its event types. An absent field is left as it
   * is; `eventTypes: null` receives every type.
   */
  updateWebhookEndpoint(
    input: Unkeyed<UpdateWebhookEndpointInput>,
    options?: MutationOptions,
  ): Promise<UpdateWebhookEndpointResult>;
  /** Nothing is delivered to it afterwards. */
  deleteWebhookEndpoint(
    input: Unkeyed<DeleteWebhookEndpointInput>,
    options?: MutationOptions,
  ): Promise<DeleteWebhookEndpointResult>;
  /**
   * A new signing secret, shown in this answer (and its replays) only. Until
   * `previousSecretExpiresAt` (default 24 h) each delivery is signed under both secrets, so a
   * receiver may switch to the new one at any time in between.
   */
  rotateWebhookSecret(
    input: Unkeyed<RotateWebhookSecretInput>,
    options?: MutationOptions,
  ): Promise<RotateWebhookSecretResult>;
  /** Delivers an event again, from its first attempt, under the same webhook-id. */
  redeliverWebhookEvent(
    input: Unkeyed<RedeliverWebhookEventInput>,
    options?: MutationOptions,
  ): Promise<RedeliverWebhookEventResult>;
  /**
   * Sends the endpoint one signed `webhook_endpoint.test` event through the normal delivery path
   * (webhookDeliveries lists it); one event per idempotency key.
   */
  sendTestWebhookEvent(
    input: Unkeyed<SendTestWebhookEventInput>,
    options?: MutationOptions,
  ): Promise<SendTestWebhookEventResult>;
  /** Null when the payment does not exist or is another tenant's. */
  payment(id: string, options?: CallOptions): Promise<PaymentQuery['payment']>;
  /** Newest first; page with `after: pageInfo.endCursor`. */
  payments(args?: PaymentsQueryVariables, options?: CallOptions): Promise<PaymentConnection>;
  balances(options?: CallOptions): Promise<Balance[]>;
  /** The tenant's webhook endpoints, oldest first, without their secrets. */
  webhookEndpoints(options?: CallOptions): Promise<WebhookEndpointsQuery['webhookEndpoints']>;
  /** An endpoint's deliveries in webhook-id order; empty for an unknown endpoint. */
  webhookDeliveries(
    args: WebhookDeliveriesQueryVariables,
    options?: CallOptions,
  ): Promise<WebhookDeliveryConnection>;
  /**
   * Any document with one operation, retried by its kind. A mutation's keys are in its
   * variables, set by the caller: the SDK sends the same variables on every attempt.
   */
  request<TData = Record<string, unknown>, TVariables = Record<string, unknown>>(
    document: TypedQueryDocumentNode<TData, TVariables> | DocumentNode | string,
    variables?: TVariables,
    options?: CallOptions,
  ): Promise<TData>;
}

export function createPaymentsClient(options: PaymentsClientOptions): PaymentsClient {
  const settings = resolveClientOptions(options);
  const prepare = createDocumentPreparer();

  async function send(call: {
    document: DocumentNode | string;
    variables: unknown;
    field: string | undefined;
    idempotencyKey: string | undefined;
    options: CallOptions | undefined;
  }): Promise<Record<string, unknown>> {
    const prepared = prepare(call.document);
    const body = JSON.stringify({
      query: prepared.query,
      variables: call.variables ?? {},
      ...(prepared.operationName === undefined ? {} : { operationName: prepared.operationName }),
    });
    const answer = await callWithRetries(
      {
        kind: prepared.kind,
        operationName: prepared.operationName ?? 'request',
        field: call.field,
        body,
        idempotencyKey: call.idempotencyKey,
        signal: call.options?.signal,
      },
      callSettings(settings, call.options),
    );
    return answer.data;
  }

  /** One keyed mutation: claim its key, send until final, forget the key once final. */
  async function mutate(call: {
    document: DocumentNode;
    field: string;
    input: object;
    options: MutationOptions | undefined;
  }): Promise<unknown> {
    const { options } = call;
    if (options?.operationId !== undefined && settings.keyStore === undefined) {
      throw invalidRequest('operationId needs a keyStore: pass one to createPaymentsClient');
    }
    const claimed = await claimCallKey({
      explicitKey: options?.idempotencyKey,
      operationId: options?.operationId,
      store: settings.keyStore,
    });
    let data: Record<string, unknown>;
    try {
      data = await send({
        document: call.document,
        variables: { input: { ...call.input, idempotencyKey: claimed.key } },
        field: call.field,
        idempotencyKey: claimed.key,
        options,
      });
    } catch (error) {
      // A retryable failure leaves the key: the outcome is open, and a resumed call needs it.
      if (error instanceof PaymentsApiError && !error.retryable) await claimed.finish();
      throw error;
    }
    await claimed.finish();
    return data[call.field];
  }

  /** A method for a keyed mutation `document` whose payload is the root field `field`. */
  function mutation<TData, TInput, F extends keyof TData & string>(
    document: TypedQueryDocumentNode<TData, { input: TInput }>,
    field: F,
  ): (input: Unkeyed<TInput>, options?: MutationOptions) => Promise<TData[F]> {
    return async (input, options) =>
      (await mutate({ document, field, input, options })) as TData[F];
  }

  /** A method for a query `document` whose answer is the root field `field`. */
  function read<TData, TVariables, F extends keyof TData & string>(
    document: TypedQueryDocumentNode<TData, TVariables>,
    field: F,
  ): (variables: TVariables, options?: CallOptions) => Promise<TData[F]> {
    return async (variables, options) => {
      const data = await send({ document, variables, field, idempotencyKey: undefined, options });
      return data[field] as TData[F];
    };
  }

  const paymentById = read(PaymentDocument, 'payment');
  const payments = read(PaymentsDocument, 'payments');
  const balances = read(BalancesDocument, 'balances');
  const webhookEndpoints = read(WebhookEndpointsDocument, 'webhookEndpoints');

  return {
    createPayment: mutation(CreatePaymentDocument, 'createPayment'),
    capturePayment: mutation(CapturePaymentDocument, 'capturePayment'),
    refundPayment: mutation(RefundPaymentDocument, 'refundPayment'),
    cancelPayment: mutation(CancelPaymentDocument, 'cancelPayment'),
    registerWebhookEndpoint: mutation(RegisterWebhookEndpointDocument, 'registerWebhookEndpoint'),
    updateWebhookEndpoint: mutation(UpdateWebhookEndpointDocument, 'updateWebhookEndpoint'),
    deleteWebhookEndpoint: mutation(DeleteWebhookEndpointDocument, 'deleteWebhookEndpoint'),
    rotateWebhookSecret: mutation(RotateWebhookSecretDocument, 'rotateWebhookSecret'),
    redeliverWebhookEvent: mutation(RedeliverWebhookEventDocument, 'redeliverWebhookEvent'),
    sendTestWebhookEvent: mutation(SendTestWebhookEventDocument, 'sendTestWebhookEvent'),
    payment: (id, options) => paymentById({ id }, options),
    payments: (args = {}, options) => payments(args, options),
    balances: (options) => balances({}, options),
    webhookEndpoints: (options) => webhookEndpoints({}, options),
    webhookDeliveries: read(WebhookDeliveriesDocument, 'webhookDeliveries'),
    async request<TData, TVariables>(
      document: TypedQueryDocumentNode<TData, TVariables> | DocumentNode | string,
      variables?: TVariables,
      options?: CallOptions,
    ): Promise<TData> {
      const data = await send({
        document,
        variables,
        field: undefined,
        idempotencyKey: undefined,
        options,
      });
      return data as TData;
    },
  };
}
