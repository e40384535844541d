/**
 * Which services this process runs (SERVICES) and where it reaches the others (SERVICE_URLS):
 * the same code, switched by configuration. `all`, the default, is the whole stack in one
 * process, as `npm start` has always run it.
 */
export const SERVICE_NAMES = [
  'gateway',
  'payments',
  'provider',
  'ledger',
  'notifications',
  'tenants',
  'ops',
] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/**
 * Whom each service calls: the services a process needs here or at a URL. The gateway calls
 * the services its schema reads and writes; payments calls the provider; an operator's re-drive
 * (ops) resumes a payment where it runs, so it calls the provider too.
 */
const CALLS: Readonly<Record<ServiceName, readonly ServiceName[]>> = {
  gateway: ['payments', 'tenants', 'ledger', 'notifications'],
  payments: ['provider'],
  provider: [],
  ledger: [],
  notifications: [],
  tenants: [],
  ops: ['provider'],
};

/**
 * Services that run in one process or not at all: the outbox dispatcher delivers to the ledger
 * and to notifications (receipts, webhooks) from one loop, in the process that runs both.
 */
const TOGETHER: ReadonlyArray<readonly [ServiceName, ServiceName]> = [['ledger', 'notifications']];

export interface Topology {
  runs: ReadonlySet<ServiceName>;
  /** The tRPC endpoint of each service this process calls but does not run. */
  urls: ReadonlyMap<ServiceName, string>;
}

/**
 * What this process runs: SERVICES when set, else every service SERVICE_URLS does not place
 * elsewhere (so `SERVICE_URLS=provider=…` alone runs the rest here).
 */
export function topologyOf(config: {
  services?: ReadonlySet<ServiceName> | undefined;
  serviceUrls: ReadonlyMap<ServiceName, string>;
}): Topology {
  const runs =
    config.services ?? new Set(SERVICE_NAMES.filter((name) => !config.serviceUrls.has(name)));
  return { runs, urls: config.serviceUrls };
}

/** SERVICES: `all`, or names separated by commas. */
export function parseServices(raw: string): ReadonlySet<ServiceName> {
  const names = raw.split(',').map((name) => name.trim());
  if (names.length === 1 && names[0] === 'all') return new Set(SERVICE_NAMES);
  const runs = new Set<ServiceName>();
  for (const name of names) {
    if (!isServiceName(name))
      throw new Error(
        `names an unknown service "${name}": use all, or ${SERVICE_NAMES.join(', ')}`,
      );
    runs.add(name);
  }
  return runs;
}

/** SERVICE_URLS: `name=url,…`, each url the base of a tRPC endpoint (http://h:4101/trpc). */
export function parseServiceUrls(raw: string): ReadonlyMap<ServiceName, string> {
  const urls = new Map<ServiceName, string>();
  for (const entry of raw.split(',')) {
    const at = entry.indexOf('=');
    const name = entry.slice(0, at).trim();
    const url = entry.slice(at + 1).trim();
    if (at < 1 || !isServiceName(name))
      throw new Error(`must be name=url,… with names among ${SERVICE_NAMES.join(', ')}`);
    if (urls.has(name)) throw new Error(`names ${name} twice`);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new Error(`gives ${name} "${url}", which is not a URL`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new Error(`gives ${name} a ${parsed.protocol} URL; use http or https`);
    urls.set(name, url.replace(/\/+$/, ''));
  }
  return urls;
}

/**
 * The refusal of a topology this process cannot run, in one line, or null. Each service is run
 * here or reached at a URL, never both; what this process's services call is one or the other.
 * A process without the gateway serves its services on INTERNAL_PORT.
 */
export function topologyProblem(
  topology: Topology,
  env: { internalPort: number | undefined; internalTokenSet: boolean; pspUrlSet: boolean },
): string | null {
  const { runs, urls } = topology;
  if (env.pspUrlSet && !runs.has('provider'))
    return 'PSP_URL is read by the process that runs the provider service, and SERVICES does not run it here';
  if (urls.has('gateway'))
    return 'SERVICE_URLS gives the gateway a URL, but no service calls the gateway';
  for (const name of urls.keys()) {
    if (runs.has(name))
      return `SERVICE_URLS gives ${name} a URL, but SERVICES runs it here: one or the other`;
  }
  if (runs.size === SERVICE_NAMES.length) return null;
  for (const [one, other] of TOGETHER) {
    if (runs.has(one) !== runs.has(other)) {
      const [here, there] = runs.has(one) ? [one, other] : [other, one];
      return `SERVICES runs ${here} without ${there}: the outbox dispatcher they share runs in the process that runs both`;
    }
  }
  const called = new Set([...runs].flatMap((name) => CALLS[name]));
  const unreached = [...called].filter((name) => !runs.has(name) && !urls.has(name));
  if (unreached.length > 0) {
    return `SERVICES does not run ${unreached.join(', ')} here and SERVICE_URLS gives no URL for it: add ${unreached[0]}=http://host:port/trpc`;
  }
  if (!runs.has('gateway') && env.internalPort === undefined)
    return `SERVICES=${[...runs].join(',')} serves its procedures on INTERNAL_PORT, which is not set`;
  if (!env.internalTokenSet)
    return runs.has('gateway')
      ? 'SERVICE_URLS needs INTERNAL_TOKEN, the token the other processes expect'
      : `SERVICES=${[...runs].join(',')} needs INTERNAL_TOKEN, shared with the processes that call it`;
  return null;
}

function isServiceName(name: string): name is ServiceName {
  return (SERVICE_NAMES as readonly string[]).includes(name);
}
