import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { WebhookAddressNotAllowedError } from './notifications.errors.ts';
import {
  addressAllowListed,
  addressRefusal,
  hostAllowListed,
  portRefusal,
  type WebhookAllowList,
} from './webhook-url.policy.ts';

/** Resolves a host name to every address it has (dns.lookup with all: true, by default). */
export type ResolveAllAddresses = (hostname: string) => Promise<LookupAddress[]>;

/**
 * A TCP (and TLS) handshake with a merchant's endpoint gets this long: a host that does not
 * answer SYNs is a failed attempt, not a dispatcher slot held for the whole request timeout.
 */
const WEBHOOK_CONNECT_TIMEOUT_MS = 3_000;

export interface WebhookPost {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

/**
 * The only way webhooks leave the process. Redirects are never followed (a 3xx is the answer,
 * and a failed attempt for the caller): a public endpoint answering 302 to 169.254.169.254 must
 * not turn into a request there. The host's addresses are resolved, judged by the policy and
 * handed to the socket in one step, inside the connection: no second resolution happens between
 * the check and the connect, so a DNS answer that changes (rebinding) is judged as it is used.
 */
export interface WebhookEgress {
  readonly allowList: WebhookAllowList;
  /** The endpoint's status; rejects when it cannot be reached or its address is not allowed. */
  post(request: WebhookPost): Promise<{ status: number }>;
  /** Ends the pooled connections (services' shutdown). */
  close(): Promise<void>;
}

export function createWebhookEgress(opts: {
  allowList: WebhookAllowList;
  resolveAll?: ResolveAllAddresses;
}): WebhookEgress {
  const { allowList } = opts;
  const resolveAll = opts.resolveAll ?? ((hostname) => dns.lookup(hostname, { all: true }));
  const agent = new Agent({
    connect: {
      lookup: checkedLookup(allowList, resolveAll),
      timeout: WEBHOOK_CONNECT_TIMEOUT_MS,
    },
  });
  return {
    allowList,
    async post(request) {
      const url = new URL(request.url);
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      // An address literal never reaches `lookup` (the socket connects to it directly): judge
      // it here, against today's allow-list, whatever was allowed when it was registered.
      if (isIP(host) !== 0) {
        const refusal = addressRefusal(host, allowList);
        if (refusal !== undefined) throw new WebhookAddressNotAllowedError(host, refusal);
      }
      // Endpoints registered before the port rule, or under a wider allow-list, are judged again.
      const listed =
        isIP(host) !== 0 ? addressAllowListed(host, allowList) : hostAllowListed(host, allowList);
      const refusedPort = portRefusal(url, listed);
      if (refusedPort !== undefined) throw new WebhookAddressNotAllowedError(host, refusedPort);
      if (url.protocol !== 'https:') await assertPlainHttpAllowed(host, allowList, resolveAll);
      const response = await agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: request.headers,
        body: request.body,
        signal: AbortSignal.timeout(request.timeoutMs),
      });
      // The body is not read: an endpoint streaming megabytes must not hold the dispatcher.
      await response.body.dump();
      return { status: response.statusCode };
    },
    close: () => agent.close(),
  };
}

/**
 * net.connect's `lookup`: resolve every address, refuse the connection if any of them is not
 * allowed (a name answering both a public and a private address is not a webhook endpoint), and
 * hand the judged addresses to the socket, in the shape it asked for (an array when Node's
 * happy-eyeballs asks with `all`, else the first address of the requested family).
 */
function checkedLookup(
  allowList: WebhookAllowList,
  resolveAll: ResolveAllAddresses,
): LookupFunction {
  return (hostname, options: LookupOptions, callback) => {
    resolveAll(hostname).then(
      (addresses) => {
        if (!hostAllowListed(hostname, allowList)) {
          for (const { address } of addresses) {
            const refusal = addressRefusal(address, allowList);
            if (refusal !== undefined) {
              callback(new WebhookAddressNotAllowedError(address, refusal), '', 0);
              return;
            }
          }
        }
        const family = familyOf(options.family);
        const usable = addresses.filter((a) => family === 0 || a.family === family);
        const first = usable[0];
        if (first === undefined) {
          callback(notFound(hostname), '', 0);
        } else if (options.all === true) {
          callback(null, usable);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}

/**
 * Plain http is for allow-listed development hosts only: an endpoint registered while its host was
 * listed is not sent a signed event in clear once it is not. A name is judged by its addresses,
 * every one of which must be listed; a second resolution here can only make the connection's own
 * check (which refuses what is not allowed at all) see a different answer, never a laxer rule.
 */
export async function assertPlainHttpAllowed(
  host: string,
  allowList: WebhookAllowList,
  resolveAll: ResolveAllAddresses,
): Promise<void> {
  if (hostAllowListed(host, allowList)) return;
  const addresses = isIP(host) !== 0 ? [host] : (await resolveAll(host)).map((a) => a.address);
  for (const address of addresses) {
    const refusal =
      addressRefusal(address, allowList) ??
      (addressAllowListed(address, allowList)
        ? undefined
        : 'plain http to an address not allow-listed');
    if (refusal !== undefined) throw new WebhookAddressNotAllowedError(address, refusal);
  }
}

function familyOf(family: LookupOptions['family']): number {
  if (family === 'IPv4') return 4;
  if (family === 'IPv6') return 6;
  return family ?? 0;
}

function notFound(hostname: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
  error.code = 'ENOTFOUND';
  return error;
}
