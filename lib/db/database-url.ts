import connectionString from 'pg-connection-string';
import type pg from 'pg';

/**
 * DATABASE_URL in libpq's forms, including the multi-host one that pg_auto_failover's
 * `pg_autoctl show uri` prints and Patroni's clients use:
 *
 *   postgresql://user@h1:5432,h2:5433/db?target_session_attrs=read-write
 *   postgresql://user@/db?host=h1,h2&port=5432,5433&target_session_attrs=primary
 *
 * node-postgres takes one host only (its parser refuses the first form outright), so the hosts
 * are split off here and each becomes a one-host URL that pg parses as it always has. Which
 * host a connection goes to is the primary finder's business (primary-finder.ts).
 */
export interface DatabaseUrl {
  /** In the URL's order, which is the order libpq tries them in. */
  endpoints: Endpoint[];
  /**
   * Connections must reach a server that accepts writes: target_session_attrs read-write or
   * primary. Also true for any URL with several hosts: the gateway writes on every path, so
   * "any host that answers" (libpq's default) would let a standby take requests it must refuse.
   */
  requirePrimary: boolean;
  /** pg's settings for one endpoint: the URL's user, database and options, that host and port. */
  configFor(endpoint: Endpoint): pg.ClientConfig;
}

export interface Endpoint {
  host: string;
  port: number;
}

/** A DATABASE_URL the gateway cannot use, with the reason in one line. */
export class DatabaseUrlError extends Error {}

const DEFAULT_PORT = 5432;
const URL_SHAPE = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/;
/** Values of target_session_attrs that ask for a writable server. */
const PRIMARY_ATTRS = new Set(['read-write', 'primary']);
/** Values that would send the gateway to a standby: never what a writer wants. */
const STANDBY_ATTRS = new Set(['read-only', 'standby', 'prefer-standby']);

export function parseDatabaseUrl(url: string): DatabaseUrl {
  const match = URL_SHAPE.exec(url);
  if (match === null) {
    // Not a URL libpq's URI syntax would take (a keyword/value string, say): pg's own parser
    // decides, as before, and one host is all it can name.
    return singleHost(url);
  }
  const [, scheme = '', userinfo = '', authority = '', rest = ''] = match;
  const query = new URLSearchParams(rest.includes('?') ? rest.slice(rest.indexOf('?') + 1) : '');
  const attrs = query.get('target_session_attrs') ?? 'any';
  if (STANDBY_ATTRS.has(attrs)) {
    throw new DatabaseUrlError(
      `DATABASE_URL asks for target_session_attrs=${attrs}: the gateway writes on every request and needs read-write`,
    );
  }
  if (attrs !== 'any' && !PRIMARY_ATTRS.has(attrs)) {
    throw new DatabaseUrlError(`DATABASE_URL has an unknown target_session_attrs=${attrs}`);
  }
  const queryHosts = query.get('host');
  const fromAuthority = authority.includes(',');
  const fromQuery = queryHosts !== null && queryHosts.includes(',') && !queryHosts.startsWith('/');
  if (!fromAuthority && !fromQuery) {
    const parsed = singleHost(withoutParams(url, ['target_session_attrs']));
    return { ...parsed, requirePrimary: PRIMARY_ATTRS.has(attrs) };
  }
  const endpoints = fromAuthority
    ? authority.split(',').map((hostPort) => splitHostPort(hostPort, DEFAULT_PORT))
    : zipHostsAndPorts(queryHosts ?? '', query.get('port'));
  const path = withoutParams(`${scheme}x${rest}`, ['target_session_attrs', 'host', 'port']).slice(
    scheme.length + 1,
  );
  return {
    endpoints,
    requirePrimary: true,
    configFor: (endpoint) =>
      connectionString.parse(
        `${scheme}${userinfo}${formatHost(endpoint.host)}:${endpoint.port}${path}`,
      ) as pg.ClientConfig,
  };
}

function singleHost(url: string): DatabaseUrl {
  const config = connectionString.parse(url) as pg.ClientConfig;
  const endpoint = { host: config.host ?? 'localhost', port: Number(config.port ?? DEFAULT_PORT) };
  return { endpoints: [endpoint], requirePrimary: false, configFor: () => config };
}

function splitHostPort(hostPort: string, fallbackPort: number): Endpoint {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(hostPort);
  if (bracketed) return { host: bracketed[1] ?? '', port: Number(bracketed[2] ?? fallbackPort) };
  const colon = hostPort.lastIndexOf(':');
  if (colon === -1) return { host: hostPort || 'localhost', port: fallbackPort };
  const port = Number(hostPort.slice(colon + 1));
  if (!Number.isInteger(port) || port <= 0 || port > 65_535) {
    throw new DatabaseUrlError(`DATABASE_URL names a host with an invalid port: ${hostPort}`);
  }
  return { host: hostPort.slice(0, colon) || 'localhost', port };
}

/** libpq: one port for all hosts, or one port per host. */
function zipHostsAndPorts(hosts: string, ports: string | null): Endpoint[] {
  const hostList = hosts.split(',');
  const portList = (ports ?? '').split(',').filter((p) => p !== '');
  if (portList.length > 1 && portList.length !== hostList.length) {
    throw new DatabaseUrlError(
      `DATABASE_URL names ${hostList.length} hosts and ${portList.length} ports`,
    );
  }
  return hostList.map((host, i) => ({
    host,
    port: Number(portList.length === 1 ? portList[0] : (portList[i] ?? DEFAULT_PORT)),
  }));
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

function withoutParams(url: string, names: string[]): string {
  const at = url.indexOf('?');
  if (at === -1) return url;
  const query = new URLSearchParams(url.slice(at + 1));
  if (!names.some((name) => query.has(name))) return url;
  for (const name of names) query.delete(name);
  const kept = query.toString();
  return kept === '' ? url.slice(0, at) : `${url.slice(0, at)}?${kept}`;
}
