import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildJavaScript } from '../../scripts/build.ts';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import { graphql, paymentOf } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { TENANT_A } from '../support/test-stack.ts';

/**
 * `npm start` runs what scripts/build.ts emits, not the TypeScript the other tests run through
 * tsx. This runs the emitted gateway: a missing runtime file (the schema, a migration) or an
 * import left pointing at a .ts file fails here, not in production.
 */
const database = useTestDatabase('built_gateway');
// Inside the project, as `dist/` is: the emitted modules find node_modules by walking up.
const outDir = join(import.meta.dirname, '..', '..', '.build-test-gateway');
let gateway: GatewayProcess | undefined;

beforeAll(() => {
  buildJavaScript(outDir);
}, 60_000);
afterAll(async () => {
  await gateway?.kill('SIGKILL');
  rmSync(outDir, { recursive: true, force: true });
});

describe('the built gateway (npm start)', () => {
  it('starts with the provider in-process, takes a payment, replays it and serves the explorer', async () => {
    gateway = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: null,
      builtMain: join(outDir, 'app', 'main.js'),
    });
    expect(gateway.child.spawnargs.some((arg) => arg.includes('tsx'))).toBe(false);
    const request = {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: {
        input: {
          idempotencyKey: 'built-1',
          amount: '12.34',
          currency: 'EUR',
          paymentMethod: 'pm_card_visa',
        },
      },
    };
    const first = await graphql(gateway.url, request);
    expect(paymentOf(first).status).toBe('SUCCEEDED');
    const replay = await graphql(gateway.url, request);
    expect(paymentOf(replay)).toEqual(paymentOf(first));
    expect(replay.body.extensions).toEqual({ idempotency: { replayed: true } });

    // The explorer is on by default and found where the build put it, beside the app.
    expect(gateway.output()).toContain(`explorer:  ${gateway.url}/graphql in a browser`);
    const page = await fetch(`${gateway.url}/graphql`, {
      headers: { accept: 'text/html' },
      signal: AbortSignal.timeout(10_000),
    });
    expect(page.status).toBe(200);
    const script = /src="(explorer\/explorer-[0-9a-f]+\.js)"/.exec(await page.text())?.[1];
    const bundle = await fetch(`${gateway.url}/${script}`, { signal: AbortSignal.timeout(10_000) });
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toBe('text/javascript; charset=utf-8');

    // SIGTERM drains and exits 0 under plain node, as under tsx (graceful-shutdown.test.ts).
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toEqual({ code: 0, signal: null });
  });
});
