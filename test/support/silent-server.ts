import { createServer, type Server, type Socket } from 'node:net';

/**
 * A server on 127.0.0.1 that takes TCP connections and never says a word: a stalled primary,
 * or one behind a route that drops its replies. pg's own defaults would wait on it for ever.
 * `stop` drops every connection it holds and closes it.
 */
export async function startSilentServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `postgresql://root@127.0.0.1:${port}/silent`,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
