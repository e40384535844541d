import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxPsp, type SandboxPsp } from '../../sandbox-psp/sandbox-server.ts';
import { startGatewayProcess } from '../support/gateway-process.ts';
import { graphql, paymentOf } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { TENANT_A } from '../support/test-stack.ts';
import { untilCharging } from '../support/until-charging.ts';

const database = useTestDatabase('shutdown');
let sandbox: SandboxPsp;

beforeAll(async () => {
  sandbox = await startSandboxPsp({ slowMs: 1_500 });
});
afterAll(async () => {
  await sandbox?.close();
});

describe('SIGTERM', () => {
  it('drains the in-flight request to its answer, then exits 0 and stops accepting', async () => {
    const gateway = await startGatewayProcess({ databaseUrl: database.url, pspUrl: sandbox.url });
    const input = {
      idempotencyKey: 'drain-1',
      amount: '1.00',
      currency: 'EUR',
      paymentMethod: 'pm_card_slow',
      reference: 'drain-1',
    };
    const inFlight = graphql(gateway.url, {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: { input },
    });
    // SIGTERM while the request is in flight: once the provider has the (slow) charge.
    await untilCharging(sandbox, 'drain-1');
    gateway.child.kill('SIGTERM');
    const answer = await inFlight;
    expect(paymentOf(answer).status).toBe('SUCCEEDED');
    expect(await gateway.exited).toEqual({ code: 0, signal: null });
    await expect(fetch(`${gateway.url}/healthz`)).rejects.toThrow();
  });

  it('stops a bare `npm start` stack (sandbox provider in-process) and exits 0', async () => {
    const gateway = await startGatewayProcess({ databaseUrl: database.url, pspUrl: null });
    const input = {
      idempotencyKey: 'drain-2',
      amount: '1.00',
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
    };
    const answer = await graphql(gateway.url, {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: { input },
    });
    expect(paymentOf(answer).status).toBe('SUCCEEDED');
    gateway.child.kill('SIGTERM');
    const exit = await Promise.race([
      gateway.exited,
      new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 15_000)),
    ]);
    if (exit === 'still running') await gateway.kill('SIGKILL');
    expect(exit).toEqual({ code: 0, signal: null });
  });
});
