import { createTRPCClient, httpLink, TRPCClientError, type TRPCClient } from '@trpc/client';
import type { AppRouter } from '../services/router.ts';

/**
 * The HTTP hop to a service in another process (SERVICE_URLS): tRPC's own client, and what
 * the hop's failures prove. Each caller (provider-over-http.ts, payments-over-http.ts) maps a
 * lost call onto the answers its own service already has.
 */

/** Sends of one call when the hop itself loses it: the same input, so the same identity. */
const HOP_ATTEMPTS = 3;
/** Pause before each resend: a restarting service needs a moment to listen again. */
const HOP_RETRY_DELAYS_MS = [100, 400] as const;

/** Headers a call carries beside the token: the request's id, and what else its trace holds. */
export type HopHeaders = Record<string, string>;

export interface HopOptions {
  /** The service's tRPC endpoint (SERVICE_URLS name=…), e.g. http://h:4101/trpc. */
  url: string;
  /** INTERNAL_TOKEN, shared by every process of the deployment. */
  internalToken: string;
  /** The longest one send may take end to end; past it the send is lost. */
  callTimeoutMs: number;
}

/**
 * A typed client of the service at `url`: keep-alive connections (Node's fetch), the internal
 * token, the headers each call passes in its context (`{ context: { headers } }`), and a
 * timeout on the whole send.
 */
export function createHopClient(options: HopOptions): TRPCClient<AppRouter> {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: options.url,
        headers: ({ op }) => ({
          authorization: `Bearer ${options.internalToken}`,
          ...(op.context['headers'] as HopHeaders | undefined),
        }),
        fetch: (url, init) => {
          const given: RequestInit | undefined = init;
          const signals = [AbortSignal.timeout(options.callTimeoutMs)];
          if (given?.signal) signals.push(given.signal);
          return fetch(String(url), { ...given, signal: AbortSignal.any(signals) });
        },
      }),
    ],
  });
}

/**
 * Why a call got no answer from the service: `unreachable` when no send ever connected (so none
 * arrived, and nothing happened), `lost` when one may have arrived.
 */
export type HopFailure = 'unreachable' | 'lost';

export type Sent<T> =
  { kind: 'answered'; value: T } | { kind: 'lost'; failure: HopFailure; error: unknown };

/**
 * Sends a call, and again while the hop loses it, up to HOP_ATTEMPTS. A loss is `unreachable`
 * only if every send was refused at connect: once one may have arrived, none proves nothing
 * happened. An answer of the service (an error it threw, a refused token) is thrown.
 */
export async function resent<T>(
  send: () => Promise<T>,
  /**
   * `unreachable`: send again only while no send has connected, for a call that would take
   * effect twice if it arrived twice (one without an idempotency key).
   */
  again: 'lost' | 'unreachable' = 'lost',
): Promise<Sent<T>> {
  let everyRefused = true;
  for (let attempt = 1; ; attempt++) {
    try {
      return { kind: 'answered', value: await send() };
    } catch (error) {
      const failure = hopFailure(error);
      if (failure === null) throw error;
      if (failure !== 'unreachable') everyRefused = false;
      if (attempt >= HOP_ATTEMPTS || (again === 'unreachable' && !everyRefused)) {
        return { kind: 'lost', failure: everyRefused ? 'unreachable' : 'lost', error };
      }
      const delayMs = HOP_RETRY_DELAYS_MS[Math.min(attempt, HOP_RETRY_DELAYS_MS.length) - 1];
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

/** Null when the service answered (with an error of its own or a refusal). */
function hopFailure(error: unknown): HopFailure | null {
  if (!(error instanceof TRPCClientError)) return null;
  // The service's own error, shaped by its error formatter: an answer, not a loss.
  if (error.data !== undefined && error.data !== null) return null;
  const response = (error.meta as { response?: { status?: number } } | undefined)?.response;
  // An HTTP answer without tRPC's shape: a refused token is a deployment's mistake, said loud.
  if (response?.status === 401 || response?.status === 403) return null;
  return causeCode(error) === 'ECONNREFUSED' ? 'unreachable' : 'lost';
}

/** The system error code under a failed fetch (TRPCClientError → TypeError → Error). */
function causeCode(error: Error): string | undefined {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code !== '') return code;
  }
  return undefined;
}
