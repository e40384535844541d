/** A minimal GraphQL-over-HTTP client for tests: real requests to 127.0.0.1, nothing mocked. */
export interface GraphQLAnswer {
  status: number;
  headers: Headers;
  body: {
    data?: Record<string, unknown> | null;
    errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
    extensions?: Record<string, unknown>;
  };
}

export async function graphql(
  url: string,
  request: {
    apiKey: string | null;
    query: string;
    variables?: Record<string, unknown>;
    timeoutMs?: number;
    requestId?: string;
  },
): Promise<GraphQLAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (request.requestId !== undefined) headers['x-request-id'] = request.requestId;
  if (request.apiKey !== null) headers['authorization'] = `Bearer ${request.apiKey}`;
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ query: request.query, variables: request.variables }),
    signal: AbortSignal.timeout(request.timeoutMs ?? 30_000),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as GraphQLAnswer['body'],
  };
}

export const CREATE_PAYMENT = `
mutation Create($input: CreatePaymentInput!) {
  createPayment(input: $input) {
    payment { id status amount currency amountCaptured amountRefunded paymentMethod reference
              providerReference failureCode createdAt refunds { id } }
    idempotency { key replayed firstRequestAt expiresAt }
  }
}`;

export interface PaymentAnswer {
  id: string;
  status: string;
  amount: string;
  currency: string;
  providerReference: string | null;
  failureCode: string | null;
  reference: string | null;
  createdAt: string;
}

export function paymentOf(answer: GraphQLAnswer): PaymentAnswer {
  const payload = answer.body.data?.['createPayment'] as { payment?: PaymentAnswer } | undefined;
  if (!payload?.payment) throw new Error(`no payment in answer: ${JSON.stringify(answer.body)}`);
  return payload.payment;
}

export function errorCodeOf(answer: GraphQLAnswer): unknown {
  return answer.body.errors?.[0]?.extensions?.['code'];
}

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
    const retryAfter = Number(answer?.headers.get('retry-after') ?? 0.2);
    await new Promise((resolve) => setTimeout(resolve, Math.min(retryAfter * 1000, 500)));
  }
}
