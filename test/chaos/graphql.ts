/**
 * The GraphQL documents the clients send and how an answer is read. Each operation kind always
 * sends the same document, so two answers for one key can be compared field for field.
 */
import type { OperationKind } from './plan.ts';

const PAYMENT = `id status amount currency amountCaptured amountRefunded paymentMethod captureMethod
  reference providerReference failureCode createdAt refunds { id paymentId amount status reason }`;
const IDEMPOTENCY = `key replayed firstRequestAt expiresAt`;

export const FIELD: Record<OperationKind, string> = {
  create: 'createPayment',
  capture: 'capturePayment',
  refund: 'refundPayment',
  cancel: 'cancelPayment',
};

export const DOCUMENT: Record<OperationKind, string> = {
  create: `mutation($input: CreatePaymentInput!) { createPayment(input: $input) {
    payment { ${PAYMENT} } idempotency { ${IDEMPOTENCY} } } }`,
  capture: `mutation($input: CapturePaymentInput!) { capturePayment(input: $input) {
    payment { ${PAYMENT} } idempotency { ${IDEMPOTENCY} } } }`,
  refund: `mutation($input: RefundPaymentInput!) { refundPayment(input: $input) {
    refund { id paymentId amount status reason } payment { ${PAYMENT} } idempotency { ${IDEMPOTENCY} } } }`,
  cancel: `mutation($input: CancelPaymentInput!) { cancelPayment(input: $input) {
    payment { ${PAYMENT} } idempotency { ${IDEMPOTENCY} } } }`,
};

export const PAYMENT_QUERY = `query($id: ID!) { payment(id: $id) { id status amount } }`;

/** Business refusals: stored for the key and replayed with the same code (docs/api.md §3). */
const STORED_ERRORS = new Set([
  'PAYMENT_NOT_FOUND',
  'INVALID_PAYMENT_STATE',
  'AMOUNT_EXCEEDS_CAPTURABLE',
  'AMOUNT_EXCEEDS_REFUNDABLE',
]);
/** Never stored: the same key must be sent again (after Retry-After when there is one). */
const TRANSIENT_ERRORS = new Set([
  'IDEMPOTENCY_KEY_IN_USE',
  'OUTCOME_PENDING',
  'PROVIDER_UNAVAILABLE',
  'RATE_LIMITED',
  'INTERNAL_SERVER_ERROR',
]);

export type Answer =
  /** A result or a stored refusal. `canonical` is what every later answer must equal. */
  | {
      kind: 'final';
      status: number;
      code: string | null;
      replayed: boolean;
      canonical: string;
      data: Record<string, unknown> | null;
    }
  /**
   * Send the same request again; `reason` is the code, NETWORK, TIMEOUT or HTTP_<status>.
   * `paymentId`: the payment a pending request already made (extensions.paymentId).
   */
  | { kind: 'retry'; reason: string; retryAfterMs: number | null; paymentId?: string }
  /** An answer the contract does not allow for this request (e.g. IDEMPOTENCY_KEY_REUSED). */
  | { kind: 'unexpected'; status: number; code: string; body: string };

interface Body {
  data?: Record<string, unknown> | null;
  errors?: Array<{ message?: string; extensions?: Record<string, unknown> }>;
  extensions?: { idempotency?: { replayed?: boolean } };
}

export async function send(input: {
  url: string;
  apiKey: string;
  query: string;
  variables: Record<string, unknown>;
  timeoutMs: number;
}): Promise<{ status: number; body: Body; retryAfter: string | null } | { failure: string }> {
  try {
    const response = await fetch(`${input.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${input.apiKey}` },
      body: JSON.stringify({ query: input.query, variables: input.variables }),
      signal: AbortSignal.timeout(input.timeoutMs),
    });
    const text = await response.text();
    let body: Body;
    try {
      body = JSON.parse(text) as Body;
    } catch {
      return { failure: `HTTP_${response.status}` };
    }
    return { status: response.status, body, retryAfter: response.headers.get('retry-after') };
  } catch (error) {
    // A gateway killed mid-request resets the connection; a stopped one never answers.
    const name = error instanceof Error ? error.name : '';
    return { failure: name === 'TimeoutError' || name === 'AbortError' ? 'TIMEOUT' : 'NETWORK' };
  }
}

/** Reads one mutation answer: final, retry, or a contract violation. */
export function classify(input: { field: string; sent: Awaited<ReturnType<typeof send>> }): Answer {
  const { sent, field } = input;
  if ('failure' in sent) return { kind: 'retry', reason: sent.failure, retryAfterMs: null };
  const { status, body } = sent;
  const retryAfterMs = sent.retryAfter === null ? null : Number(sent.retryAfter) * 1000;
  const error = body.errors?.[0];
  if (error === undefined) {
    const payload = body.data?.[field];
    if (typeof payload !== 'object' || payload === null) {
      return { kind: 'unexpected', status, code: 'NO_PAYLOAD', body: JSON.stringify(body) };
    }
    const data = payload as Record<string, unknown>;
    const idempotency = data['idempotency'] as { replayed?: boolean } | undefined;
    const { replayed, ...rest } = idempotency ?? {};
    const canonical = JSON.stringify({ status, ...data, idempotency: rest });
    return { kind: 'final', status, code: null, replayed: replayed === true, canonical, data };
  }
  const code = typeof error.extensions?.['code'] === 'string' ? error.extensions['code'] : 'NONE';
  if (TRANSIENT_ERRORS.has(code)) {
    const paymentId = error.extensions?.['paymentId'];
    return typeof paymentId === 'string'
      ? { kind: 'retry', reason: code, retryAfterMs, paymentId }
      : { kind: 'retry', reason: code, retryAfterMs };
  }
  if (STORED_ERRORS.has(code)) {
    const canonical = JSON.stringify({ status, code, message: error.message });
    const replayed = body.extensions?.idempotency?.replayed === true;
    return { kind: 'final', status, code, replayed, canonical, data: null };
  }
  return { kind: 'unexpected', status, code, body: JSON.stringify(body).slice(0, 500) };
}
