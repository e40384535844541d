import { createServer } from 'node:net';
import { startChild, type StartedChild } from './child-process.ts';
import { INTERNAL_TOKEN } from './test-stack.ts';

/** The provider service's process; its `url` is its tRPC endpoint, for SERVICE_URLS. */
export type ProviderProcess = StartedChild;

/** A free loopback port, so a restarted provider service listens where its callers expect it. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The provider service alone in a real process (SERVICES=provider), as `npm start` runs it. */
export function startProviderProcess(opts: {
  pspUrl: string;
  port: number;
  env?: Record<string, string>;
}): Promise<ProviderProcess> {
  return startChild({
    name: 'provider service',
    args: ['--import', 'tsx', 'app/main.ts'],
    env: {
      ...process.env,
      NODE_ENV: 'production',
      SERVICES: 'provider',
      INTERNAL_PORT: String(opts.port),
      INTERNAL_TOKEN,
      PSP_URL: opts.pspUrl,
      ...opts.env,
    },
    ready: /provider service: (http:\/\/\S+)/,
  });
}
