/**
 * examples/checkout.ts, run as its header says (tsx, the SDK from source) against a real
 * gateway whose outbox dispatcher runs, as `npm start`'s does: the order is authorised,
 * captured and partly refunded, and the balance it prints includes that capture and refund
 * (10.50 − 2.50), not a ledger a moment behind them (issue 35).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TENANT_A, useTestStack } from '../support/test-stack.ts';

const stack = useTestStack('checkout-example', {
  // The ledger posts on its own, a poll at a time, as in `npm start`.
  app: { startRecoveryWorker: true },
});

/** tsx compiles the example and the SDK on start; the run itself takes about a second. */
const EXAMPLE_TIMEOUT_MS = 45_000;

const repository = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'pgw-checkout-example-'));
});
afterAll(async () => {
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

/** Runs the example in a directory of its own (it keeps its keys under .data/ there). */
async function runExample(orderId: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(
    process.execPath,
    [
      // The SDK from its sources, as the workspace's TypeScript resolves it (no build needed).
      '--conditions=@payments-gateway/source',
      '--import',
      repository('node_modules/tsx/dist/loader.mjs'),
      repository('examples/checkout.ts'),
    ],
    {
      cwd: directory,
      env: {
        ...process.env,
        PAYMENTS_GATEWAY_URL: `${stack.app.url}/graphql`,
        PAYMENTS_API_KEY: TENANT_A.apiKey,
        ORDER_ID: orderId,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: EXAMPLE_TIMEOUT_MS,
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}

describe('examples/checkout.ts', () => {
  it('prints a balance that includes its own capture and refund', async () => {
    const { code, output } = await runExample('order-example-1');
    expect(code, output).toBe(0);
    expect(output).toMatch(/payment \S+ REQUIRES_CAPTURE/);
    expect(output).toContain('captured 10.50 EUR');
    expect(output).toContain('refunded 2.50: SUCCEEDED');
    // The tenant's only money: this order's capture less its refund, and current.
    const line = /^balance EUR: (\S+) as of (\S+)(.*)$/m.exec(output);
    expect(line, output).not.toBeNull();
    expect(line![1]).toBe('8.00');
    expect(line![3]).toBe('');
  });
});
