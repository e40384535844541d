/**
 * The network between the gateways and what they call: a TCP fault proxy in front of every
 * PostgreSQL host of the run's database URL and one in front of the provider, so the fault
 * schedule's network episodes (latency, resets, blackholes, half-open connections) hit the
 * gateways' own connections and nothing else: the harness's pool and the clients go direct.
 */
import { parseDatabaseUrl } from '../../lib/db/database-url.ts';
import { startTcpFaultProxy, type TcpFaultProxy } from '../support/tcp-fault-proxy.ts';
import type { NetworkPaths } from './faults.ts';

export interface Network {
  paths: NetworkPaths;
  /** The database URL the gateways are given: every host replaced by its proxy. */
  databaseUrl: string;
  /** The provider's base URL the gateways are given, through its proxy. */
  pspUrl: string;
  close(): Promise<void>;
}

const AUTHORITY = /^(postgres(?:ql)?:\/\/[^@/?#]*@)([^/?#]*)(.*)$/;

export async function startNetwork(input: {
  databaseUrl: string;
  sandboxUrl: string;
}): Promise<Network> {
  const match = AUTHORITY.exec(input.databaseUrl);
  const endpoints = parseDatabaseUrl(input.databaseUrl).endpoints;
  if (match === null || endpoints.some((e) => e.host !== '127.0.0.1')) {
    throw new Error(
      `the chaos suite puts a proxy in front of PostgreSQL, which needs a URL of 127.0.0.1 hosts (user@host:port form); got ${input.databaseUrl.replace(/:[^:@/]*@/, ':***@')}`,
    );
  }
  const database: TcpFaultProxy[] = [];
  for (const endpoint of endpoints) database.push(await startTcpFaultProxy(endpoint));
  const psp = new URL(input.sandboxUrl);
  const provider = await startTcpFaultProxy({ host: psp.hostname, port: Number(psp.port) });
  const [, userinfo = '', , rest = ''] = match;
  return {
    paths: { database, provider },
    databaseUrl: `${userinfo}${database.map((p) => `127.0.0.1:${p.port}`).join(',')}${rest}`,
    pspUrl: `http://127.0.0.1:${provider.port}`,
    async close() {
      await Promise.all([...database, provider].map((p) => p.close()));
    },
  };
}
