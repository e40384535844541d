import ipaddr from 'ipaddr.js';
import { InputInvalidError } from '../../lib/errors.ts';
import { WebhookUrlNotAllowedError } from './notifications.errors.ts';

/**
 * Where webhooks may go (SSRF): a merchant's URL must not make the gateway reach the metadata
 * service, the database or anything else on our networks. Two checks share this policy:
 * registration judges the URL as written, without DNS (a name that does not resolve yet is
 * accepted); delivery judges every address the name resolves to, and connects to the address it
 * judged (webhook-egress.client.ts), so a record changed in between gains nothing.
 */

/** The long-standing practical URL limit of browsers and proxies; a longer one is not an endpoint. */
const URL_MAX_CHARS = 2_048;

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** The ports of https and http, the web's two privileged ports a receiver listens on. */
const WEB_PORTS: ReadonlySet<number> = new Set([80, 443]);
/**
 * From here up, ports need no privilege to bind: where receivers run in development and behind
 * their own proxies. Below it (22, 25, 53, …) listen the services of a host, never a webhook.
 */
const UNPRIVILEGED_PORTS_FROM = 1_024;
/**
 * Unprivileged ports of the databases, caches, queues and control planes a platform runs
 * (PostgreSQL, MySQL, Redis, memcached, MongoDB, Elasticsearch, Kafka, AMQP, etcd, Docker,
 * Kubernetes, Consul): no webhook receiver listens there, and such a service of ours that has a
 * public address too must not be reachable by a tenant's URL.
 */
const INTERNAL_SERVICE_PORTS: ReadonlySet<number> = new Set([
  1433, 1521, 2375, 2376, 2379, 2380, 3306, 5432, 5672, 5984, 6379, 6443, 8500, 9092, 9200, 9300,
  10250, 11211, 27017,
]);

/**
 * Why a URL's port is refused, or undefined. A host the allow-list names (by name, or an
 * address in a listed range) may use any port from 1: an operator who lists a development
 * receiver knows where it listens. Port 0 is never a destination.
 */
export function portRefusal(url: URL, allowListed: boolean): string | undefined {
  if (url.port === '') return undefined;
  const port = Number(url.port);
  if (port === 0) return 'port 0 is not a destination';
  if (allowListed || WEB_PORTS.has(port)) return undefined;
  if (port < UNPRIVILEGED_PORTS_FROM)
    return `port ${port} is not one webhooks may use (80, 443 or 1024-65535)`;
  if (INTERNAL_SERVICE_PORTS.has(port))
    return `port ${port} is that of an internal service (a database, cache or control plane)`;
  return undefined;
}

/** WEBHOOK_ALLOWED_HOSTS, parsed: names matched exactly, and address ranges. */
export interface WebhookAllowList {
  /** Lower-case, without a trailing dot. */
  readonly hosts: ReadonlySet<string>;
  readonly ranges: ReadonlyArray<readonly [Address, number]>;
}

export const EMPTY_WEBHOOK_ALLOW_LIST: WebhookAllowList = { hosts: new Set(), ranges: [] };

/**
 * Loopback, as WEBHOOK_ALLOWED_HOSTS would list it: where a developer's own receiver listens.
 * The embedded mode's default (app/config.ts, ADR 0043); like any listed host, on any port but 0.
 */
export const LOOPBACK_WEBHOOK_ALLOWED_HOSTS = '127.0.0.0/8,::1/128,localhost';

/** RFC 1123 labels; what an operator writes for a host in the allow-list. */
const HOSTNAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
/** A label WHATWG URL reads as a number: the host is then parsed as an IPv4 address. */
const NUMERIC_LABEL = /^(0x[0-9a-f]*|[0-9]+)$/;

/**
 * `127.0.0.1/32,::1/128,localhost`: CIDRs, single addresses and hostnames. A malformed entry
 * throws naming the variable: a typo must fail the start, not silently allow nothing (or more).
 */
export function parseWebhookAllowList(
  raw: string | undefined,
  variable = 'WEBHOOK_ALLOWED_HOSTS',
): WebhookAllowList {
  const hosts = new Set<string>();
  const ranges: Array<readonly [Address, number]> = [];
  for (const item of (raw ?? '').split(',')) {
    const entry = item.trim().toLowerCase();
    if (entry === '') continue;
    const range = rangeOf(entry);
    if (range !== undefined) ranges.push(range);
    else if (HOSTNAME.test(stripDot(entry)) && !NUMERIC_LABEL.test(lastLabel(entry)))
      hosts.add(stripDot(entry));
    else
      throw new Error(
        `${variable}: "${item.trim()}" is neither a hostname nor an address or CIDR (e.g. 127.0.0.1/32,::1/128,localhost)`,
      );
  }
  return { hosts, ranges };
}

/** Only four-part decimal IPv4 in the allow-list: `127.1` there would be as ambiguous as in a URL. */
function rangeOf(entry: string): readonly [Address, number] | undefined {
  if (entry.includes('/')) {
    if (ipaddr.IPv4.isValidCIDRFourPartDecimal(entry)) return ipaddr.IPv4.parseCIDR(entry);
    if (ipaddr.IPv6.isValidCIDR(entry)) return ipaddr.IPv6.parseCIDR(entry);
    return undefined;
  }
  if (ipaddr.IPv4.isValidFourPartDecimal(entry)) return [ipaddr.IPv4.parse(entry), 32];
  if (ipaddr.IPv6.isValid(entry)) return [ipaddr.IPv6.parse(entry), 128];
  return undefined;
}

/**
 * IPv4-compatible IPv6 (::a.b.c.d): ipaddr.js calls it unicast, but it is deprecated, no
 * endpoint has one, and some stacks route it to the IPv4 address it embeds. (NAT64, 6to4 and
 * Teredo, which embed one too, are ranges of their own, so refused as not `unicast`.)
 */
const IPV4_COMPATIBLE: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('::'), 96];

/**
 * Why an address is refused, or undefined when a webhook may reach it. IPv4-mapped IPv6 is
 * judged as the IPv4 address it carries; every range but ipaddr.js's `unicast` is refused
 * (loopback, private, linkLocal, carrierGradeNat, uniqueLocal, multicast, unspecified,
 * broadcast, reserved, 6to4, teredo, NAT64, …), unless the allow-list names the range.
 */
export function addressRefusal(address: string, allow: WebhookAllowList): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  if (addressAllowListed(address, allow)) return undefined;
  const parsed = ipaddr.parse(address);
  const judged = unmapped(parsed);
  const range = judged.range();
  if (range !== 'unicast') return parsed === judged ? range : `ipv4Mapped ${range}`;
  if (judged instanceof ipaddr.IPv6 && judged.match(IPV4_COMPATIBLE)) return 'ipv4Compatible';
  return undefined;
}

/** In a range of the allow-list, as written or as the IPv4 address it maps. */
export function addressAllowListed(address: string, allow: WebhookAllowList): boolean {
  const parsed = ipaddr.parse(address);
  const judged = unmapped(parsed);
  return allow.ranges.some(
    ([prefix, bits]) =>
      (prefix.kind() === judged.kind() && judged.match([prefix, bits])) ||
      (prefix.kind() === parsed.kind() && parsed.match([prefix, bits])),
  );
}

function unmapped(address: Address): Address {
  return address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress()
    ? address.toIPv4Address()
    : address;
}

/** A host name the allow-list names (case and a trailing dot do not matter). */
export function hostAllowListed(hostname: string, allow: WebhookAllowList): boolean {
  return allow.hosts.has(stripDot(hostname.toLowerCase()));
}

/**
 * Names that lead inside whatever public DNS says: loopback names (RFC 6761), mDNS and
 * cloud-internal zones (`metadata.google.internal`), and single labels, which the resolver's
 * search domains complete to a host on our own network.
 */
function internalNameReason(name: string): string | undefined {
  if (name === 'localhost' || name.endsWith('.localhost')) return 'a loopback name';
  if (name.endsWith('.local') || name.endsWith('.internal')) return 'an internal name';
  if (!name.includes('.'))
    return 'a single-label name, completed by our resolver to an internal host';
  return undefined;
}

/**
 * The URL a webhook endpoint is registered with, judged as written (no DNS). BAD_USER_INPUT for
 * a URL that is not one we deliver to at all (not absolute, not http(s), credentials, too long,
 * plain http to a host not allow-listed); WEBHOOK_URL_NOT_ALLOWED for one that points inside,
 * or at a port no receiver listens on (portRefusal).
 * Returns the URL as WHATWG serialises it, which is what is stored and delivered to.
 */
export function judgeWebhookUrl(raw: string, allow: WebhookAllowList): string {
  if (raw.length > URL_MAX_CHARS)
    throw new InputInvalidError('url', `url must be at most ${URL_MAX_CHARS} characters`);
  const rawHost = rawHostOf(raw);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // WHATWG refuses some numeric hosts (`0xa9fe.0xa9fe`) that other parsers read as an address.
    if (rawHost !== undefined && NUMERIC_LABEL.test(lastLabel(rawHost)))
      throw new WebhookUrlNotAllowedError(`"${rawHost}" is not a canonical IPv4 address`, null);
    throw new InputInvalidError('url', 'url must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new InputInvalidError('url', 'url must be https');
  if (url.username !== '' || url.password !== '')
    throw new InputInvalidError('url', 'url must not carry credentials');
  const allowListed = judgeHost(url.hostname, rawHost, allow);
  const refusedPort = portRefusal(url, allowListed);
  if (refusedPort !== undefined)
    throw new WebhookUrlNotAllowedError(
      refusedPort,
      url.port === '0' ? null : allowListEntryFor(url.hostname),
    );
  if (url.protocol === 'http:' && !allowListed)
    throw new InputInvalidError(
      'url',
      'url must be https (plain http only to hosts listed in WEBHOOK_ALLOWED_HOSTS)',
    );
  return url.toString();
}

/** Throws when the host points inside; true when the allow-list names it. */
function judgeHost(
  hostname: string,
  rawHost: string | undefined,
  allow: WebhookAllowList,
): boolean {
  if (hostname.startsWith('[')) {
    const address = hostname.slice(1, -1);
    const refusal = addressRefusal(address, allow);
    if (refusal !== undefined)
      throw new WebhookUrlNotAllowedError(
        `${address} is ${describeRefusal(refusal)}`,
        allowListEntryFor(hostname),
      );
    return addressAllowListed(address, allow);
  }
  if (ipaddr.IPv4.isValidFourPartDecimal(hostname)) {
    // WHATWG already turned `2852039166`, `0251.0376.0251.0376`, `127.1` and `%31…` into
    // dotted-quad: only the text as written shows they were something else. Refused whatever the
    // address: no legitimate endpoint is written that way, and every other parser reads it
    // differently.
    if (rawHost !== hostname)
      throw new WebhookUrlNotAllowedError(
        `"${rawHost ?? '?'}" is not a canonical IPv4 address (it means ${hostname})`,
        null,
      );
    const refusal = addressRefusal(hostname, allow);
    if (refusal !== undefined)
      throw new WebhookUrlNotAllowedError(
        `${hostname} is ${describeRefusal(refusal)}`,
        allowListEntryFor(hostname),
      );
    return addressAllowListed(hostname, allow);
  }
  if (hostAllowListed(hostname, allow)) return true;
  const reason = internalNameReason(stripDot(hostname));
  if (reason !== undefined)
    throw new WebhookUrlNotAllowedError(`${hostname} is ${reason}`, allowListEntryFor(hostname));
  return false;
}

/**
 * The WEBHOOK_ALLOWED_HOSTS entry that would allow `hostname` (as WHATWG serialises it), or null
 * when no entry would (a name the variable does not take). Built from the merchant's URL alone,
 * never from the allow-list: a refusal must not tell a tenant what the operator listed.
 */
function allowListEntryFor(hostname: string): string | null {
  if (hostname.startsWith('[')) return `${hostname.slice(1, -1)}/128`;
  if (ipaddr.IPv4.isValidFourPartDecimal(hostname)) return `${hostname}/32`;
  const name = stripDot(hostname);
  return HOSTNAME.test(name) && !NUMERIC_LABEL.test(lastLabel(name)) ? name : null;
}

/** ipaddr.js's range names, as a sentence says them. */
const RANGE_WORDS: Readonly<Record<string, string>> = {
  loopback: 'loopback',
  private: 'private',
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT',
  uniqueLocal: 'unique-local',
  multicast: 'multicast',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  reserved: 'reserved',
  ipv4Compatible: 'IPv4-compatible',
};

/** `loopback` → `a loopback address`; `ipv4Mapped linkLocal` → `an IPv4-mapped link-local address`. */
function describeRefusal(refusal: string): string {
  const mapped = refusal.startsWith('ipv4Mapped ');
  const range = mapped ? refusal.slice('ipv4Mapped '.length) : refusal;
  const words = RANGE_WORDS[range];
  if (words === undefined) return `in a range webhooks may not reach (${refusal})`;
  const adjective = mapped ? `IPv4-mapped ${words}` : words;
  return `${/^[aeiouAEIOU]/.test(adjective) ? 'an' : 'a'} ${adjective} address`;
}

/**
 * The host as the merchant wrote it, read the way WHATWG URL reads a special scheme's
 * authority (outer C0 and spaces trimmed, tabs and newlines dropped, `\` as `/`, any number of
 * slashes, userinfo up to the last `@`, the port after the last `:`). An approximation that
 * errs one way: a mismatch with the parsed host refuses an IPv4 literal, never admits one.
 */
function rawHostOf(raw: string): string | undefined {
  let start = 0;
  let end = raw.length;
  while (start < end && raw.charCodeAt(start) <= 0x20) start++;
  while (end > start && raw.charCodeAt(end - 1) <= 0x20) end--;
  const cleaned = raw
    .slice(start, end)
    .replace(/[\t\n\r]/g, '')
    .replace(/\\/g, '/');
  const match = /^[a-z][a-z0-9+.-]*:\/*([^/?#]*)/i.exec(cleaned);
  if (match === null) return undefined;
  const authority = (match[1] ?? '').slice((match[1] ?? '').lastIndexOf('@') + 1);
  if (authority.startsWith('['))
    return authority.slice(0, authority.indexOf(']') + 1).toLowerCase();
  const colon = authority.lastIndexOf(':');
  return (colon === -1 ? authority : authority.slice(0, colon)).toLowerCase();
}

function stripDot(host: string): string {
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

function lastLabel(host: string): string {
  const labels = stripDot(host).split('.');
  return labels[labels.length - 1] ?? '';
}
