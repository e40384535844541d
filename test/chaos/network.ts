/**
 * The network between the gateways and what they call: a TCP fault proxy in front of every
 * PostgreSQL host of the run's database URL, one in front of the provider, and in split tiers
 * one in front of each service process (the hops: gateway → payments, payments → provider), so
 * the fault schedule's network episodes (latency, resets, blackholes, half-open connections)
 * hit the stack's own connections and nothing else: the harness's pool and the clients go direct.
 */
import { parseDatabaseUrl } from '../../lib/db/database-url.ts';
import { startTcpFaultProxy, type TcpFaultProxy } from '../support/tcp-fault-proxy.ts';
import type { NetworkPaths } from './faults.ts';

export interface Network {
  paths: NetworkPaths;
  /** The database URL the processes are given: every host replaced by its proxy. */
  databaseUrl: string;
  /** The provider's base URL the provider service is given, through its proxy. */
  pspUrl: string;
  /** Split tiers: each service's tRPC endpoint, through its hop's proxy; else null. */
  services: { providerUrl: string; paymentsUrls: string[] } | null;
  close(): Promise<void>;
}

const AUTHORITY = /^(postgres(?:ql)?:\/\/[^@/?#]*@)([^/?#]*)(.*)$/;

export async function startNetwork(input: {
  databaseUrl: string;
  sandboxUrl: string;
  /** Split tiers: the service processes' ports, which the hops' proxies forward to. */
  servicePorts: { provider: number; payments: number[] } | null;
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
  const hop = (port: number) => startTcpFaultProxy({ host: '127.0.0.1', port });
  const ports = input.servicePorts;
  const providerHop = ports === null ? null : await hop(ports.provider);
  const paymentsHops = ports === null ? [] : await Promise.all(ports.payments.map(hop));
  const hops = [...(providerHop === null ? [] : [providerHop]), ...paymentsHops];
  const trpcAt = (proxy: TcpFaultProxy) => `http://127.0.0.1:${proxy.port}/trpc`;
  const [, userinfo = '', , rest = ''] = match;
  return {
    paths: { database, provider, hops },
    databaseUrl: `${userinfo}${database.map((p) => `127.0.0.1:${p.port}`).join(',')}${rest}`,
    pspUrl: `http://127.0.0.1:${provider.port}`,
    services:
      providerHop === null
        ? null
        : { providerUrl: trpcAt(providerHop), paymentsUrls: paymentsHops.map(trpcAt) },
    async close() {
      await Promise.all([...database, provider, ...hops].map((p) => p.close()));
    },
  };
}
