/**
 * The GraphQL documents the tests send, declared once, and typed helpers to send them. A test
 * that deliberately selects other fields (a narrow selection, a replay compared whole) keeps its
 * own document and says why beside it.
 */
import { errorCodeOf, graphql, type GraphQLAnswer } from './graphql-client.ts';

export const CREATE_PAYMENT = `
mutation Create($input: CreatePaymentInput!) {
  createPayment(input: $input) {
    payment { id status amount currency amountCaptured amountRefunded paymentMethod reference
              providerReference failureCode createdAt refunds { id } }
    idempotency { key replayed firstRequestAt expiresAt }
  }
}`;

/** capturePayment and cancelPayment select alike: the payment as it now stands, and the key. */
const paymentOperation = (name: string, field: string, inputType: string): string => `
mutation ${name}($input: ${inputType}!) {
  ${field}(input: $input) {
    payment { id status amount amountCaptured providerReference }
    idempotency { key replayed }
  }
}`;

export const CAPTURE_PAYMENT = paymentOperation('Capture', 'capturePayment', 'CapturePaymentInput');

export const CANCEL_PAYMENT = paymentOperation('Cancel', 'cancelPayment', 'CancelPaymentInput');

export const REFUND_PAYMENT = `
mutation Refund($input: RefundPaymentInput!) {
  refundPayment(input: $input) {
    refund { id paymentId amount status reason }
    payment { id status amountCaptured amountRefunded refunds { id amount status } }
    idempotency { replayed }
  }
}`;

export const REGISTER_WEBHOOK_ENDPOINT = `
mutation Register($input: RegisterWebhookEndpointInput!) {
  registerWebhookEndpoint(input: $input) {
    endpoint { id url secret status createdAt }
    idempotency { key replayed firstRequestAt expiresAt }
  }
}`;

/** One page of the tenant's payments, newest first, optionally by reference. */
export const PAYMENTS_PAGE = `
query Payments($first: Int, $after: String, $reference: String) {
  payments(first: $first, after: $after, reference: $reference) {
    edges { cursor node { id reference } }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const BALANCES = '{ balances { currency available } }';

/** Where a request goes and as whom: a gateway's base URL and an API key (null: none sent). */
export interface Caller {
  url: string;
  apiKey: string | null;
}

type Input = Record<string, unknown>;

/** Sends a mutation document with `{ input }` as its variables. */
export function mutate(caller: Caller, document: string, input: Input): Promise<GraphQLAnswer> {
  return graphql(caller.url, { apiKey: caller.apiKey, query: document, variables: { input } });
}

export const createPayment = (caller: Caller, input: Input): Promise<GraphQLAnswer> =>
  mutate(caller, CREATE_PAYMENT, input);
export const capturePayment = (caller: Caller, input: Input): Promise<GraphQLAnswer> =>
  mutate(caller, CAPTURE_PAYMENT, input);
export const cancelPayment = (caller: Caller, input: Input): Promise<GraphQLAnswer> =>
  mutate(caller, CANCEL_PAYMENT, input);
export const refundPayment = (caller: Caller, input: Input): Promise<GraphQLAnswer> =>
  mutate(caller, REFUND_PAYMENT, input);
export const registerWebhookEndpoint = (caller: Caller, input: Input): Promise<GraphQLAnswer> =>
  mutate(caller, REGISTER_WEBHOOK_ENDPOINT, input);
export const balances = (caller: Caller): Promise<GraphQLAnswer> =>
  graphql(caller.url, { apiKey: caller.apiKey, query: BALANCES });

/** The longest a well-behaved client waits between two retries, whatever Retry-After says. */
const MAX_RETRY_WAIT_MS = 500;

/** Retries a createPayment the way a well-behaved client does, honouring Retry-After, until it is final. */
export async function createUntilFinal(
  url: string,
  request: { apiKey: string; input: Record<string, unknown>; deadlineMs: number },
): Promise<GraphQLAnswer> {
  const deadline = Date.now() + request.deadlineMs;
  for (;;) {
    let answer: GraphQLAnswer | undefined;
    try {
      answer = await graphql(url, {
        apiKey: request.apiKey,
        query: CREATE_PAYMENT,
        variables: { input: request.input },
      });
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    const code = answer ? errorCodeOf(answer) : 'NETWORK';
    const retryable =
      code === 'IDEMPOTENCY_KEY_IN_USE' ||
      code === 'OUTCOME_PENDING' ||
      code === 'PROVIDER_UNAVAILABLE' ||
      code === 'NETWORK';
    if (answer && !retryable) return answer;
    if (Date.now() > deadline)
      throw new Error(`still not final after ${request.deadlineMs} ms: ${String(code)}`);
    // A client's back-off is the point here, not a wait for a condition: it is how the gateway
    // is meant to be retried.
    const retryAfter = Number(answer?.headers.get('retry-after') ?? 0.2);
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(retryAfter * 1000, MAX_RETRY_WAIT_MS)),
    );
  }
}
