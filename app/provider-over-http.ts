import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import type { ProviderPort } from '../services/provider/contract.ts';
import type { AppRouter } from '../services/router.ts';

/**
 * Sends of one provider call when the hop itself loses it (a reset, a refused connection, the
 * provider service restarting): the same input, so the same provider key, which the PSP
 * answers once however many times it arrives.
 */
const HOP_ATTEMPTS = 3;
/** Pause before each resend: a restarting provider service needs a moment to listen again. */
const HOP_RETRY_DELAYS_MS = [100, 400] as const;
/**
 * A refused connection proves the provider service never received the call: the payments
 * service may report "try again" rather than an unknown outcome.
 */
const UNREACHABLE_RETRY_AFTER_SECONDS = 1;

export interface ProviderOverHttpOptions {
  /** The provider service's tRPC endpoint (SERVICE_URLS provider=…), e.g. http://h:4101/trpc. */
  url: string;
  /** INTERNAL_TOKEN, shared by every process of the deployment. */
  internalToken: string;
  /**
   * The longest one call may take end to end: the provider service's own bound (its attempts
   * at the PSP) plus the hop. Past it the call's outcome is unknown, as a PSP timeout is.
   */
  callTimeoutMs: number;
}

/** Why a provider call over the hop got no answer from the provider service. */
type HopFailure = 'unreachable' | 'lost';

/**
 * The provider service reached over HTTP (SERVICES without `provider`): the same ProviderPort
 * the payments service uses in process, so its flows do not change. The hop's own failures map
 * onto the outcomes a provider call already has:
 * - the provider service answered: its answer, or its error thrown as in process;
 * - every send was refused at connect: for a charge or an operation `unavailable` (nothing was
 *   sent, so nothing happened), for a probe no answer;
 * - any other loss (a reset, a timeout, an answer that is not tRPC's): `timeout`, an unknown
 *   outcome, which the payments service settles by probing under the same key, exactly as
 *   after a PSP timeout.
 * A statement has no unknown outcome; its loss is thrown, and the reconciler tries later.
 */
export function providerOverHttp(options: ProviderOverHttpOptions): {
  /** The port for calls made on behalf of one request: its id travels as X-Request-Id. */
  forRequest(requestId: string | null): ProviderPort;
} {
  const client = createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: options.url,
        headers: ({ op }) => {
          const requestId = op.context['requestId'];
          return {
            authorization: `Bearer ${options.internalToken}`,
            ...(typeof requestId === 'string' ? { 'x-request-id': requestId } : {}),
          };
        },
        // Node's fetch keeps connections alive; the timeout bounds the whole call.
        fetch: (url, init) => {
          const given: RequestInit | undefined = init;
          const signals = [AbortSignal.timeout(options.callTimeoutMs)];
          if (given?.signal) signals.push(given.signal);
          return fetch(String(url), { ...given, signal: AbortSignal.any(signals) });
        },
      }),
    ],
  });

  return {
    forRequest(requestId) {
      const context = { context: { requestId } };
      return {
        charge: (request) =>
          resent(() => client.provider.charge.mutate(request, context)).then(
            answered(unknownOrUnavailable),
          ),
        probeCharge: (request) =>
          resent(() => client.provider.probeCharge.query(request, context)).then(
            answered(noAnswer),
          ),
        operate: (request) =>
          resent(() => client.provider.operate.mutate(request, context)).then(
            answered(unknownOrUnavailable),
          ),
        probeOperation: (request) =>
          resent(() => client.provider.probeOperation.query(request, context)).then(
            answered(noAnswer),
          ),
        statement: async (range) => {
          const sent = await resent(() => client.provider.statement.query(range, context));
          if (sent.kind === 'lost') throw sent.error;
          return sent.value;
        },
      };
    },
  };
}

type Sent<T> =
  { kind: 'answered'; value: T } | { kind: 'lost'; failure: HopFailure; error: unknown };

/**
 * Sends a call, and again while the hop loses it, up to HOP_ATTEMPTS. A loss is `unreachable`
 * only if every send was refused at connect: once one may have arrived, none proves nothing
 * happened. An answer of the provider service (an error it threw, a refused token) is thrown.
 */
async function resent<T>(send: () => Promise<T>): Promise<Sent<T>> {
  let everyRefused = true;
  for (let attempt = 1; ; attempt++) {
    try {
      return { kind: 'answered', value: await send() };
    } catch (error) {
      const failure = hopFailure(error);
      if (failure === null) throw error;
      if (failure !== 'unreachable') everyRefused = false;
      if (attempt >= HOP_ATTEMPTS) {
        return { kind: 'lost', failure: everyRefused ? 'unreachable' : 'lost', error };
      }
      const delayMs = HOP_RETRY_DELAYS_MS[Math.min(attempt, HOP_RETRY_DELAYS_MS.length) - 1];
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

/** The value of an answered call, or what `lost` makes of a lost one. */
function answered<T, L>(lost: (failure: HopFailure) => L): (sent: Sent<T>) => T | L {
  return (sent) => (sent.kind === 'answered' ? sent.value : lost(sent.failure));
}

/** A charge or an operation the hop lost: unknown, unless no send ever reached the service. */
function unknownOrUnavailable(
  failure: HopFailure,
): { kind: 'timeout' } | { kind: 'unavailable'; retryAfterSeconds: number } {
  return failure === 'unreachable'
    ? { kind: 'unavailable', retryAfterSeconds: UNREACHABLE_RETRY_AFTER_SECONDS }
    : { kind: 'timeout' };
}

/** A probe the hop lost: no answer, whatever the reason (a probe has no "nothing happened"). */
function noAnswer(): { kind: 'timeout' } {
  return { kind: 'timeout' };
}

/** Null when the provider service answered (with an error of its own or a refusal). */
function hopFailure(error: unknown): HopFailure | null {
  if (!(error instanceof TRPCClientError)) return null;
  // The provider service's own error, shaped by its error formatter: an answer, not a loss.
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
