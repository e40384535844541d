import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that can cut a connection at the worst moment: after a
 * COMMIT has reached the server (so it commits) and before the answer gets back (so the client
 * cannot know). `cutAfterNextCommit()` arms it for one COMMIT. Plain protocol only: the test
 * server speaks to it without TLS.
 */
export interface CommitCutter {
  /** postgres:// URL that goes through the proxy to `targetUrl`'s database. */
  url: string;
  cutAfterNextCommit(): void;
  /** How many COMMITs were cut. */
  cuts(): number;
  close(): Promise<void>;
}

/** The simple-query message node-pg sends for client.query('COMMIT'): 'Q', length, text, NUL. */
const COMMIT_QUERY = Buffer.concat([
  Buffer.from('Q'),
  Buffer.from([0, 0, 0, 11]),
  Buffer.from('COMMIT\0'),
]);

export async function startCommitCutter(targetUrl: string): Promise<CommitCutter> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  let armed = false;
  let cuts = 0;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let commitInFlight = false;
    client.on('data', (chunk: Buffer) => {
      if (armed && chunk.includes(COMMIT_QUERY)) {
        armed = false;
        commitInFlight = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (commitInFlight) {
        // The server has answered the COMMIT, so it has committed. Drop the answer and the line.
        cuts += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(targetUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as AddressInfo).port);
  return {
    url: proxied.toString(),
    cutAfterNextCommit: () => void (armed = true),
    cuts: () => cuts,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
