/**
 * A TCP proxy for any protocol (PostgreSQL's, HTTP to the provider) that misbehaves the way
 * networks do, in episodes the caller starts:
 *
 * - `latency`: for the episode, every chunk either way is held `delayMs` before it is passed
 *   on, in order (a congested or rerouted path).
 * - `reset`: every open connection is reset at once, both ends (a middlebox restarting, a
 *   failover of a virtual IP).
 * - `blackhole`: for the episode, connections are accepted and nothing is passed on either way,
 *   new connections included; at the end what was held flows (a stalled route that recovers).
 *   Nothing is answered meanwhile, so only a timeout of the caller's notices it.
 * - `half-open`: each open connection's far end is closed and its near end is kept open and
 *   silent: what the client sends is swallowed and nothing comes back, until the episode ends
 *   and the near end is reset (as keepalive or a timeout would find it in the end). New
 *   connections meanwhile pass normally.
 *
 * Only 127.0.0.1. close() destroys every socket it holds.
 */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export type NetworkFault = 'latency' | 'reset' | 'blackhole' | 'half-open';

export interface TcpFaultProxy {
  /** Where clients connect instead of the target. */
  host: string;
  port: number;
  /** Episodes run so far, per kind. */
  counts: Record<NetworkFault, number>;
  /** Runs one episode; resolves when it is over (at once for `reset`). */
  inject(fault: NetworkFault, episode: { ms: number; delayMs?: number }): Promise<void>;
  close(): Promise<void>;
}

interface Link {
  client: Socket;
  upstream: Socket;
  /** Chunks on their way, per direction, in order. */
  chain: { up: Promise<void>; down: Promise<void> };
  silenced: boolean;
}

export async function startTcpFaultProxy(target: {
  host: string;
  port: number;
}): Promise<TcpFaultProxy> {
  if (target.host !== '127.0.0.1' && target.host !== 'localhost')
    throw new Error('the TCP fault proxy only fronts loopback');
  const links = new Set<Link>();
  const counts: Record<NetworkFault, number> = {
    latency: 0,
    reset: 0,
    blackhole: 0,
    'half-open': 0,
  };
  /** While set, every chunk waits for it: the blackhole's end. */
  let hold: Promise<void> | undefined;
  let delayMs = 0;

  const pass = (link: Link, direction: 'up' | 'down', chunk: Buffer) => {
    if (link.silenced) return;
    const to = direction === 'up' ? link.upstream : link.client;
    const held = hold;
    const delay = delayMs;
    link.chain[direction] = link.chain[direction].then(async () => {
      if (held !== undefined) await held;
      if (delay > 0) await sleep(delay);
      if (!link.silenced && !to.destroyed) to.write(chunk);
    });
  };

  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const link: Link = {
      client,
      upstream,
      chain: { up: Promise.resolve(), down: Promise.resolve() },
      silenced: false,
    };
    links.add(link);
    client.on('data', (chunk: Buffer) => pass(link, 'up', chunk));
    upstream.on('data', (chunk: Buffer) => pass(link, 'down', chunk));
    const end = () => {
      links.delete(link);
      if (!link.silenced) {
        client.destroy();
        upstream.destroy();
      }
    };
    // Ends travel after the data before them, so a clean close stays clean.
    client.on('end', () => void link.chain.up.then(() => upstream.end()));
    upstream.on('end', () => void link.chain.down.then(() => client.end()));
    client.on('close', end);
    upstream.on('close', () => {
      if (!link.silenced) end();
    });
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    host: '127.0.0.1',
    port,
    counts,
    async inject(fault, episode) {
      counts[fault] += 1;
      switch (fault) {
        case 'latency':
          delayMs = episode.delayMs ?? episode.ms;
          await sleep(episode.ms);
          delayMs = 0;
          return;
        case 'reset':
          for (const link of links) {
            link.client.resetAndDestroy();
            link.upstream.resetAndDestroy();
          }
          return;
        case 'blackhole': {
          let release = () => undefined as void;
          hold = new Promise<void>((resolve) => {
            release = resolve;
          });
          await sleep(episode.ms);
          hold = undefined;
          release();
          return;
        }
        case 'half-open': {
          const victims = [...links];
          for (const link of victims) {
            link.silenced = true;
            link.upstream.destroy();
          }
          await sleep(episode.ms);
          for (const link of victims) {
            links.delete(link);
            link.client.resetAndDestroy();
          }
          return;
        }
      }
    },
    async close() {
      for (const link of links) {
        link.client.destroy();
        link.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
