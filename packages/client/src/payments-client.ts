/**
 * createPaymentsClient: the gateway's operations as typed methods (docs/api.md §6). Each
 * mutation is one logical call with one idempotency key, reused on every retry; each method
 * always sends its one generated document.
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
  PaymentDocument,
  PaymentsDocument,
  RefundPaymentDocument,
  RegisterWebhookEndpointDocument,
  type BalancesQuery,
  type CancelPaymentInput,
  type CancelPaymentMutation,
  type CapturePaymentInput,
  type CapturePaymentMutation,
  type CreatePaymentInput,
  type CreatePaymentMutation,
  type PaymentQuery,
  type PaymentsQuery,
  type PaymentsQueryVariables,
  type RefundPaymentInput,
  type RefundPaymentMutation,
  type RegisterWebhookEndpointInput,
  type RegisterWebhookEndpointMutation,
} from './generated/graphql.ts';
import { invalidRequest, PaymentsApiError } from './payments-api-error.ts';
import { createDocumentPreparer } from './prepared-document.ts';

/** A mutation's input without its key: the SDK sets `idempotencyKey` itself. */
type Unkeyed<T> = Omit<T, 'idempotencyKey'>;

export type CreatePaymentResult = CreatePaymentMutation['createPayment'];
export type CapturePaymentResult = CapturePaymentMutation['capturePayment'];
export type RefundPaymentResult = RefundPaymentMutation['refundPayment'];
export type CancelPaymentResult = CancelPaymentMutation['cancelPayment'];
export type RegisterWebhookEndpointResult =
  RegisterWebhookEndpointMutation['registerWebhookEndpoint'];
export type PaymentConnection = PaymentsQuery['payments'];
export type Balance = BalancesQuery['balances'][number];

export interface PaymentsClient {
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
  registerWebhookEndpoint(
    input: Unkeyed<RegisterWebhookEndpointInput>,
    options?: MutationOptions,
  ): Promise<RegisterWebhookEndpointResult>;
  /** Null when the payment does not exist or is another tenant's. */
  payment(id: string, options?: CallOptions): Promise<PaymentQuery['payment']>;
  payments(args?: PaymentsQueryVariables, options?: CallOptions): Promise<PaymentConnection>;
  balances(options?: CallOptions): Promise<Balance[]>;
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
  async function mutate<TPayload>(call: {
    document: DocumentNode;
    field: string;
    input: object;
    options: MutationOptions | undefined;
  }): Promise<TPayload> {
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
    return data[call.field] as TPayload;
  }

  return {
    createPayment: (input, options) =>
      mutate({ document: CreatePaymentDocument, field: 'createPayment', input, options }),
    capturePayment: (input, options) =>
      mutate({ document: CapturePaymentDocument, field: 'capturePayment', input, options }),
    refundPayment: (input, options) =>
      mutate({ document: RefundPaymentDocument, field: 'refundPayment', input, options }),
    cancelPayment: (input, options) =>
      mutate({ document: CancelPaymentDocument, field: 'cancelPayment', input, options }),
    registerWebhookEndpoint: (input, options) =>
      mutate({
        document: RegisterWebhookEndpointDocument,
        field: 'registerWebhookEndpoint',
        input,
        options,
      }),
    async payment(id, options) {
      const data = await send({
        document: PaymentDocument,
        variables: { id },
        field: 'payment',
        idempotencyKey: undefined,
        options,
      });
      return data['payment'] as PaymentQuery['payment'];
    },
    async payments(args = {}, options) {
      const data = await send({
        document: PaymentsDocument,
        variables: args,
        field: 'payments',
        idempotencyKey: undefined,
        options,
      });
      return data['payments'] as PaymentConnection;
    },
    async balances(options) {
      const data = await send({
        document: BalancesDocument,
        variables: {},
        field: 'balances',
        idempotencyKey: undefined,
        options,
      });
      return data['balances'] as Balance[];
    },
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
