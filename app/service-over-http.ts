import { getUntypedClient } from '@trpc/client';
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

/** A client whose call got no answer is told to come back this soon. */
const LOST_RETRY_AFTER_SECONDS = 1;

/**
 * Whether a procedure may be sent again when the hop loses it:
 * - `read`: a query, with no effect;
 * - `keyed`: a command under an idempotency key (or a message id), which the service runs once
 *   and answers the same after;
 * - `once`: a command that would take effect twice if it arrived twice (an operator's tool, a
 *   new API key): sent again only while no send has connected, so none can have arrived.
 */
export type ResendRule = 'read' | 'keyed' | 'once';

/** The services another process may run, reached through this module (the provider has its own). */
export type RemoteService = Exclude<keyof ServiceCaller, 'provider' | 'system'>;

/** A rule for every procedure of a service: the type checker refuses a table that misses one. */
export type ResendRules<N extends RemoteService> = Record<keyof ServiceCaller[N], ResendRule>;

/**
 * Each service's procedures, and how each may be sent again. A new procedure fails the type
 * check until it is given a rule here.
 */
export const RESEND_RULES: { [N in RemoteService]: ResendRules<N> } = {
  payments: {
    create: 'keyed',
    capture: 'keyed',
    refund: 'keyed',
    cancel: 'keyed',
    get: 'read',
    list: 'read',
  },
  tenants: {
    authenticate: 'read',
    get: 'read',
    createApiKey: 'once',
    listApiKeys: 'read',
    revokeApiKey: 'once',
  },
  // A posting is a no-op the second time, by its message's inbox row and its posting id.
  ledger: { post: 'keyed', postMany: 'keyed', balances: 'read', trialBalance: 'read' },
  notifications: {
    registerEndpoint: 'keyed',
    updateEndpoint: 'keyed',
    deleteEndpoint: 'keyed',
    rotateSecret: 'keyed',
    redeliverEvent: 'keyed',
    sendTestEvent: 'keyed',
    listEndpoints: 'read',
    listDeliveries: 'read',
  },
  ops: {
    listUnfinished: 'read',
    redrive: 'once',
    resolve: 'once',
    dataKeys: 'read',
    reencryptAnswers: 'once',
    reencryptSecrets: 'once',
    referenceGuard: 'read',
    setReferenceGuard: 'once',
    reconcile: 'once',
  },
};

/**
 * A service in another process (SERVICE_URLS name=…), reached over tRPC's HTTP client: the same
 * procedures a caller in this process calls in process, so the gateway's resolvers do not
 * change. A send the hop loses (a reset, a refused connection, a timeout) is sent again as its
 * rule allows, and:
 * - the service answered: its answer (a replay, if a lost send had run), or its error as in
 *   process (a catalog code, or a failure the gateway masks);
 * - no send was answered: SERVICE_UNAVAILABLE, a 503 with Retry-After. A command may have run;
 *   the client's retry with the same key replays it or runs it, once either way.
 * The request's id and the wait its client was granted (Prefer: wait) travel as headers.
 */
export function serviceOverHttp<N extends RemoteService>(
  service: N,
  options: HopOptions,
): {
  /** The procedures for one request (null: the process's own calls, with no request). */
  forTrace(trace: RequestTrace | null): ServiceCaller[N];
} {
  const client = getUntypedClient(createHopClient(options));
  const rules: Record<string, ResendRule> = RESEND_RULES[service];
  return {
    forTrace(trace) {
      const call = (procedure: string, rule: ResendRule) => (input: unknown) => {
        const path = `${service}.${procedure}`;
        // Read at each call: the edge may grant the wait after it made the request's caller.
        const at = () => ({ context: { headers: traceHeaders(trace) } });
        const send =
          rule === 'read'
            ? () => client.query(path, input, at())
            : () => client.mutation(path, input, at());
        return answerOf(resent(send, rule === 'once' ? 'unreachable' : 'lost'));
      };
      const procedures = Object.fromEntries(
        Object.entries(rules).map(([procedure, rule]) => [procedure, call(procedure, rule)]),
      );
      // Every procedure of ServiceCaller[N] is here (RESEND_RULES is checked against it), each
      // taking its input and resolving to what the service answered.
      return procedures as ServiceCaller[N];
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

/** What the called service's trace must know of the request: its id and its key wait. */
function traceHeaders(trace: RequestTrace | null): HopHeaders {
  if (trace === null) return {};
  return {
    'x-request-id': trace.requestId,
    ...(trace.keyWaitMs > 0 ? { [KEY_WAIT_HEADER]: String(Math.floor(trace.keyWaitMs)) } : {}),
  };
}
