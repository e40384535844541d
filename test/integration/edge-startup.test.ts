import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import { useTestDatabase } from '../support/test-database.ts';

/**
 * `npm start` with the edge's variables: the startup lines name where tRPC and metrics really
 * are, and a bad value stops the start with a line naming its variable.
 */
const database = useTestDatabase('edge_startup');
/** A failing start ends at its first line; tsx compiling the entry point takes most of this. */
const START_DEADLINE_MS = 30_000;
let gateway: GatewayProcess | undefined;

afterAll(async () => {
  await gateway?.kill('SIGKILL');
});

describe('npm start with INTERNAL_PORT', () => {
  it('prints the internal address for metrics and tRPC, and serves them only there', async () => {
    gateway = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: null,
      env: { INTERNAL_PORT: '0', RATE_LIMIT_TENANT_PER_SECOND: '100' },
    });
    const metricsUrl = /metrics:\s+(http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(
      gateway.output(),
    )?.[1];
    const trpcUrl = /tRPC:\s+(http:\/\/127\.0\.0\.1:\d+)\/trpc/.exec(gateway.output())?.[1];
    expect(metricsUrl).toBeDefined();
    expect(trpcUrl).toBe(metricsUrl);
    expect(metricsUrl).not.toBe(gateway.url);
    expect((await fetch(`${metricsUrl}/metrics`)).status).toBe(200);
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(404);
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toEqual({ code: 0, signal: null });
  });
});

describe('npm start with a bad edge variable', () => {
  it.each([
    [{ RATE_LIMIT_TENANT_BURST: '10' }, 'RATE_LIMIT_TENANT_BURST'],
    [{ RATE_LIMIT_UNAUTHENTICATED_PER_SECOND: 'many' }, 'RATE_LIMIT_UNAUTHENTICATED_PER_SECOND'],
    [{ INTERNAL_PORT: '-1' }, 'INTERNAL_PORT'],
    [{ LEASE_MS: '500' }, 'LEASE_MS must be at least 1000 ms: an owner renews its lease'],
    [
      { BOOTSTRAP_TENANTS: 'acme:sk_test_short_key_16' },
      'BOOTSTRAP_TENANTS: the API key of tenant 1 \\(acme\\) is 20 characters; at least 32',
    ],
  ])('%j fails naming %s', async (env, variable) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'app/main.ts'], {
      cwd: new URL('../..', import.meta.url).pathname,
      env: { ...process.env, DATABASE_URL: database.url, PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // A start that does not fail would serve on: bound the wait.
    const deadline = setTimeout(() => child.kill('SIGKILL'), START_DEADLINE_MS);
    const [code] = (await once(child, 'exit')) as [number | null];
    clearTimeout(deadline);
    expect(code).toBe(1);
    expect(output).toMatch(new RegExp(`start failed:.*${variable}`));
    // One line an operator can act on: no stack trace under it.
    expect(output).not.toMatch(/\n\s+at /);
    expect(output).not.toContain('sk_test_short_key_16');
  });
});
