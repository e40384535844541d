import type { ProviderPort } from '../services/provider/contract.ts';
import {
  createHopClient,
  resent,
  type HopFailure,
  type HopHeaders,
  type HopOptions,
  type Sent,
} from './trpc-hop.ts';

/**
 * A refused connection proves the provider service never received the call: the payments
 * service may report "try again" rather than an unknown outcome.
 */
const UNREACHABLE_RETRY_AFTER_SECONDS = 1;

/**
 * The provider service's endpoint (SERVICE_URLS provider=…) and token; `callTimeoutMs` is the
 * provider service's own bound (its attempts at the PSP) plus the hop. Past it the call's
 * outcome is unknown, as a PSP timeout is.
 */
export type ProviderOverHttpOptions = HopOptions;

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
  const client = createHopClient(options);

  return {
    forRequest(requestId) {
      const context = { context: { headers: requestIdHeader(requestId) } };
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

/** The calling request's id as X-Request-Id, so the provider's lines carry it. */
function requestIdHeader(requestId: string | null): HopHeaders {
  return requestId === null ? {} : { 'x-request-id': requestId };
}
