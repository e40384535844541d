/**
 * A fetch for the SDK's unit tests that answers from a script, one step per request, and keeps
 * every request it was sent (headers, body, when). What it scripts is the transport; the rules
 * under test (retry, backoff, keys, deadlines) all run for real. The tests against the real
 * gateway are in against-gateway.test.ts and faulty-network.test.ts.
 */
import type { FetchLike, FetchResponseLike } from '../../packages/client/src/index.ts';

export type Step =
  /** An HTTP answer. `body` is sent as JSON unless it is a string. */
  | { status: number; body: unknown; headers?: Record<string, string> }
  /** The connection fails (as undici's `TypeError: fetch failed`). */
  | { fail: 'network' }
  /** No answer until the request's signal aborts. */
  | { hang: true };

export interface SentRequest {
  url: string;
  headers: Record<string, string>;
  body: { query: string; variables: Record<string, unknown>; operationName?: string };
  at: number;
}

export interface ScriptedFetch {
  fetch: FetchLike;
  sent: SentRequest[];
}

/** GraphQL's error answer with a code (and its extensions). */
export function errorAnswer(input: {
  status: number;
  code: string;
  extensions?: Record<string, unknown>;
  headers?: Record<string, string>;
}): Step {
  return {
    status: input.status,
    body: {
      errors: [{ message: input.code, extensions: { code: input.code, ...input.extensions } }],
    },
    ...(input.headers === undefined ? {} : { headers: input.headers }),
  };
}

/** A createPayment result for `key`. */
export function paymentAnswer(key: string, paymentId = 'pay_1'): Step {
  return {
    status: 200,
    body: {
      data: {
        createPayment: {
          payment: { id: paymentId, status: 'SUCCEEDED' },
          idempotency: { key, replayed: false },
        },
      },
    },
  };
}

/** Answers with `steps` in order; past the last step, repeats it. */
export function scriptedFetch(steps: Step[]): ScriptedFetch {
  const sent: SentRequest[] = [];
  const fetch: FetchLike = (url, init) => {
    sent.push({
      url,
      headers: init.headers,
      body: JSON.parse(init.body) as SentRequest['body'],
      at: Date.now(),
    });
    const step = steps[Math.min(sent.length - 1, steps.length - 1)];
    if (step === undefined) return Promise.reject(new Error('an empty script'));
    if ('fail' in step) return Promise.reject(new TypeError('fetch failed'));
    if ('hang' in step) {
      return new Promise<FetchResponseLike>((_, reject) => {
        const abort = () => reject(init.signal.reason as Error);
        if (init.signal.aborted) abort();
        else init.signal.addEventListener('abort', abort, { once: true });
      });
    }
    const text = typeof step.body === 'string' ? step.body : JSON.stringify(step.body);
    const headers = new Headers(step.headers);
    return Promise.resolve({
      status: step.status,
      headers,
      text: () => Promise.resolve(text),
    });
  };
  return { fetch, sent };
}

/** The key a createPayment request carried. */
export function keyOf(request: SentRequest | undefined): unknown {
  const input = request?.body.variables['input'] as { idempotencyKey?: unknown } | undefined;
  return input?.idempotencyKey;
}
