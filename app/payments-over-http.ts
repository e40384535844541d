import { TRPCError } from '@trpc/server';
import { KEY_WAIT_HEADER } from '../gateway/http/prefer-wait.ts';
import { AppError, LIB_ERRORS } from '../lib/errors.ts';
import type { RequestTrace } from '../lib/logging/request-trace.ts';
import type { ServiceCaller } from '../services/router.ts';
import {
  createHopClient,
  resent,
  type HopHeaders,
  type HopOptions,
  type Sent,
} from './trpc-hop.ts';

/** A gateway whose call got no answer tells its client to come back this soon. */
const LOST_RETRY_AFTER_SECONDS = 1;

export type PaymentsOverHttpOptions = HopOptions;

/**
 * The payments service reached over HTTP (SERVICE_URLS payments=…): the same procedures the
 * gateway calls in process, so its resolvers do not change. Every one of them may be sent
 * again: reads have no effect, and a command carries its idempotency key, under which the
 * payments service runs it once and replays its answer after. So a send the hop loses (a reset,
 * a refused connection, a timeout) is sent again under the same key, and:
 * - the payments service answered: its answer (a replay, if the lost send had run), or its
 *   error as in process (a catalog code, or a failure the gateway masks);
 * - no send was answered: SERVICE_UNAVAILABLE, a 503 with Retry-After. The command may have
 *   run; the client's retry with the same key replays it or runs it, once either way.
 * The request's id and the wait its client was granted (Prefer: wait) travel as headers.
 */
export function paymentsOverHttp(options: PaymentsOverHttpOptions): {
  /** The procedures for one request (null: the process's own calls, with no request). */
  forTrace(trace: RequestTrace | null): ServiceCaller['payments'];
} {
  const client = createHopClient(options);
  return {
    forTrace(trace) {
      // Read at each call: the edge may grant the wait after it made the request's caller.
      const at = () => ({ context: { headers: traceHeaders(trace) } });
      return {
        create: (input) => answerOf(resent(() => client.payments.create.mutate(input, at()))),
        capture: (input) => answerOf(resent(() => client.payments.capture.mutate(input, at()))),
        refund: (input) => answerOf(resent(() => client.payments.refund.mutate(input, at()))),
        cancel: (input) => answerOf(resent(() => client.payments.cancel.mutate(input, at()))),
        get: (input) => answerOf(resent(() => client.payments.get.query(input, at()))),
        list: (input) => answerOf(resent(() => client.payments.list.query(input, at()))),
      };
    },
  };
}

/** The service's answer, or the refusal a client retries when no send was answered. */
async function answerOf<T>(sending: Promise<Sent<T>>): Promise<T> {
  const sent = await sending;
  if (sent.kind === 'answered') return sent.value;
  // Thrown as tRPC's in-process caller throws: the gateway reads the cause's catalog code.
  throw new TRPCError({
    code: 'INTERNAL_SERVER_ERROR',
    cause: new AppError(LIB_ERRORS.SERVICE_UNAVAILABLE, {
      cause: sent.error,
      details: { retryAfterSeconds: LOST_RETRY_AFTER_SECONDS },
    }),
  });
}

/** What the payments service's trace must know of the request: its id and its key wait. */
function traceHeaders(trace: RequestTrace | null): HopHeaders {
  if (trace === null) return {};
  return {
    'x-request-id': trace.requestId,
    ...(trace.keyWaitMs > 0 ? { [KEY_WAIT_HEADER]: String(Math.floor(trace.keyWaitMs)) } : {}),
  };
}
