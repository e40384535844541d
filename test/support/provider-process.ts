import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { INTERNAL_TOKEN } from './test-stack.ts';

/** How long the provider process may take to print its ready line (tsx compiles on start). */
const START_TIMEOUT_MS = 30_000;

export interface ProviderProcess {
  /** Its tRPC endpoint, for SERVICE_URLS. */
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** A free loopback port, so a restarted provider service listens where its callers expect it. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The provider service alone in a real process (SERVICES=provider), as `npm start` runs it. */
export async function startProviderProcess(opts: {
  pspUrl: string;
  port: number;
  env?: Record<string, string>;
}): Promise<ProviderProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'app/main.ts'], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      SERVICES: 'provider',
      INTERNAL_PORT: String(opts.port),
      INTERNAL_TOKEN,
      PSP_URL: opts.pspUrl,
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const deadline = Date.now() + START_TIMEOUT_MS;
  let url: string | undefined;
  while (url === undefined) {
    url = /provider service: (http:\/\/\S+)/.exec(output)?.[1];
    if (url !== undefined) break;
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`provider service exited during start:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`provider service did not start in time:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    exited,
    output: () => output,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
