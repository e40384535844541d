/**
 * The network between the gateways and what they call: a TCP fault proxy in front of every
 * PostgreSQL host of the run's database URL, one in front of the provider, and in split tiers
 * one in front of the provider service's process (the hop), so the fault
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
  /** Split tiers: the provider service's tRPC endpoint, through the hop's proxy; else null. */
  providerServiceUrl: string | null;
  close(): Promise<void>;
}

const AUTHORITY = /^(postgres(?:ql)?:\/\/[^@/?#]*@)([^/?#]*)(.*)$/;

export async function startNetwork(input: {
  databaseUrl: string;
  sandboxUrl: string;
  /** Split tiers: the provider service's port, which the hop's proxy forwards to. */
  providerPort: number | null;
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
  const hop =
    input.providerPort === null
      ? null
      : await startTcpFaultProxy({ host: '127.0.0.1', port: input.providerPort });
  const [, userinfo = '', , rest = ''] = match;
  return {
    paths: { database, provider, hop },
    databaseUrl: `${userinfo}${database.map((p) => `127.0.0.1:${p.port}`).join(',')}${rest}`,
    pspUrl: `http://127.0.0.1:${provider.port}`,
    providerServiceUrl: hop === null ? null : `http://127.0.0.1:${hop.port}/trpc`,
    async close() {
      await Promise.all(
        [...database, provider, ...(hop === null ? [] : [hop])].map((p) => p.close()),
      );
    },
  };
}
