/** A minimal GraphQL-over-HTTP client for tests: real requests to 127.0.0.1, nothing mocked. */
export interface GraphQLAnswer {
  status: number;
  headers: Headers;
  body: {
    data?: Record<string, unknown> | null;
    errors?: Array<{
      message: string;
      path?: Array<string | number>;
      locations?: Array<{ line: number; column: number }>;
      extensions?: Record<string, unknown>;
    }>;
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
    /** Ends the request when it aborts, instead of timeoutMs: a client that gives up on cue. */
    signal?: AbortSignal;
    requestId?: string;
    /** More request headers (Prefer, Idempotency-Attempt). */
    headers?: Record<string, string>;
  },
): Promise<GraphQLAnswer> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...request.headers,
  };
  if (request.requestId !== undefined) headers['x-request-id'] = request.requestId;
  if (request.apiKey !== null) headers['authorization'] = `Bearer ${request.apiKey}`;
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ query: request.query, variables: request.variables }),
    signal: request.signal ?? AbortSignal.timeout(request.timeoutMs ?? 30_000),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as GraphQLAnswer['body'],
  };
}

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
