import type { RequestTrace } from '../lib/logging/request-trace.ts';
import { longestExchangeMs } from '../gateway/http/server-timeouts.ts';
import { createHttpProviderAdapter } from '../services/provider/index.ts';
import type { ProviderAdapter, ProviderPort } from '../services/provider/contract.ts';
import type { ServiceCaller } from '../services/router.ts';
import { providerOverHttp } from './provider-over-http.ts';
import { serviceOverHttp, type RemoteService } from './service-over-http.ts';

/**
 * How this process reaches each service: in process through tRPC's caller, or at another
 * process's tRPC endpoint (SERVICE_URLS). The composition (compose.ts) asks here and does not
 * care which.
 */

/** Where the services this process does not run are, and the bounds their hops take from. */
export interface HopsConfig {
  /**
   * Where this process reaches the PSP: the provider service runs here. Or, with the provider
   * service in a process of its own, where that service's tRPC endpoint is (SERVICE_URLS).
   */
  provider:
    | { runsHere: true; pspUrl: string }
    | { runsHere: false; url: string; internalToken: string }
    /** Nothing here calls it: the payments service, its one caller, runs elsewhere. */
    | { runsHere: false; url: null };
  /**
   * The services that run in other processes (SERVICE_URLS), reached over tRPC with the
   * deployment's INTERNAL_TOKEN; every other one runs here.
   */
  elsewhere: { urls: ReadonlyMap<RemoteService, string>; internalToken: string };
  providerTimeoutMs: number;
  providerMaxAttempts: number;
}

/**
 * The PSP adapter this process holds (the provider service's own, or a refusal where it runs
 * elsewhere), and the provider port payments calls for one request (or for none).
 */
export function providerHop(config: HopsConfig): {
  adapter: ProviderAdapter & { close(): Promise<void> };
  portFor(requestId: string | null, localCaller: () => ServiceCaller): ProviderPort;
} {
  const adapter = config.provider.runsHere
    ? createHttpProviderAdapter(config.provider.pspUrl)
    : providerElsewhere();
  const remote =
    config.provider.runsHere || config.provider.url === null
      ? null
      : providerOverHttp({
          url: config.provider.url,
          internalToken: config.provider.internalToken,
          callTimeoutMs: providerCallTimeoutMs(config),
        });
  const here = config.provider.runsHere;
  return {
    adapter,
    portFor: (requestId, localCaller) =>
      remote?.forRequest(requestId) ?? (here ? providerThrough(localCaller) : providerElsewhere()),
  };
}

/** The caller of every service, with those in other processes swapped for their clients. */
export function serviceHops(config: HopsConfig): {
  callerFor(local: ServiceCaller, trace: RequestTrace | null): ServiceCaller;
} {
  const remotes = remotesOf(config);
  return { callerFor: (local, trace) => withRemotes(local, remotes, trace) };
}

/**
 * payments → provider goes through tRPC like any service-to-service call, so the provider
 * service can move to its own process without the payments code changing.
 */
function providerThrough(caller: () => ServiceCaller): ProviderPort {
  return {
    charge: (request) => caller().provider.charge(request),
    probeCharge: (request) => caller().provider.probeCharge(request),
    operate: (request) => caller().provider.operate(request),
    probeOperation: (request) => caller().provider.probeOperation(request),
    statement: (range) => caller().provider.statement(range),
  };
}

/** Slack on top of the provider service's own bound, for the hop and its retry backoffs. */
const PROVIDER_HOP_SLACK_MS = 3_000;

/**
 * The longest a provider call over the hop may take: every attempt the provider service makes
 * at the PSP (each up to the provider timeout), and the slack. Past it the outcome is unknown.
 */
function providerCallTimeoutMs(config: HopsConfig): number {
  return Math.max(1, config.providerMaxAttempts) * config.providerTimeoutMs + PROVIDER_HOP_SLACK_MS;
}

/**
 * The longest a call to a service in another process may take: the longest exchange a request
 * may have there (a provider call, a probe, a key wait), and the hop's slack.
 */
function serviceCallTimeoutMs(config: HopsConfig): number {
  return longestExchangeMs(config.providerTimeoutMs) + PROVIDER_HOP_SLACK_MS;
}

/** The services in other processes, each as procedures for one request (or for none). */
type Remotes = { [N in RemoteService]?: (trace: RequestTrace | null) => ServiceCaller[N] };

/**
 * A caller whose services in other processes are swapped for their tRPC clients: the gateway's
 * resolvers call the one object either way.
 */
function withRemotes(
  caller: ServiceCaller,
  remotes: Remotes,
  trace: RequestTrace | null,
): ServiceCaller {
  return {
    payments: remotes.payments?.(trace) ?? caller.payments,
    provider: caller.provider,
    tenants: remotes.tenants?.(trace) ?? caller.tenants,
    system: caller.system,
    ops: remotes.ops?.(trace) ?? caller.ops,
    ledger: remotes.ledger?.(trace) ?? caller.ledger,
    notifications: remotes.notifications?.(trace) ?? caller.notifications,
  };
}

/** A tRPC client for each service SERVICE_URLS places in another process. */
function remotesOf(config: HopsConfig): Remotes {
  const { urls, internalToken } = config.elsewhere;
  const at = <N extends RemoteService>(name: N) => {
    const url = urls.get(name);
    if (url === undefined) return undefined;
    const hop = serviceOverHttp(name, {
      url,
      internalToken,
      callTimeoutMs: serviceCallTimeoutMs(config),
    });
    return (trace: RequestTrace | null) => hop.forTrace(trace);
  };
  return {
    payments: at('payments'),
    tenants: at('tenants'),
    ledger: at('ledger'),
    notifications: at('notifications'),
    ops: at('ops'),
  };
}

/**
 * The PSP adapter of a process whose provider service runs elsewhere: its own /trpc still
 * lists the provider's procedures, and a call that reaches them here is a deployment's
 * mistake, refused by name rather than sent to a PSP this process was never given. It is also
 * the provider port of a process that runs no payments, which never calls the provider.
 */
function providerElsewhere(): ProviderAdapter & ProviderPort & { close(): Promise<void> } {
  const refuse = () =>
    Promise.reject(
      new Error('the provider service runs in another process (SERVICE_URLS provider=…)'),
    );
  return {
    charge: refuse,
    operate: refuse,
    probeCharge: refuse,
    probeOperation: refuse,
    statement: refuse,
    close: () => Promise.resolve(),
  };
}
