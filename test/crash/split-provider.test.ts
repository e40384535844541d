import { describe, expect, it } from 'vitest';
import {
  RECOVERY_WORKER_OFF,
  useGatewayProcessRig,
  SPLIT_FINAL_DEADLINE_MS,
} from '../support/gateway-process-rig.ts';
import { errorCodeOf, graphql, paymentOf } from '../support/graphql-client.ts';
import { untilCharging } from '../support/until-charging.ts';
import { CREATE_PAYMENT, createUntilFinal } from '../support/operations.ts';
import {
  freePort,
  startProviderProcess,
  type ProviderProcess,
} from '../support/provider-process.ts';
import { INTERNAL_TOKEN, paymentInput, TENANT_A } from '../support/test-stack.ts';

/**
 * The provider service in a process of its own (SERVICES=provider), the gateway and payments in
 * another that reaches it through SERVICE_URLS. Each is a real process; the sandbox PSP runs in
 * the test, so a killed process takes nothing of the PSP's books with it.
 */
const rig = useGatewayProcessRig('split_provider');

/** The gateway process for a provider service at `providerUrl`; it has no PSP of its own. */
function gatewayFor(providerUrl: string) {
  return rig.startGateway({
    ...RECOVERY_WORKER_OFF,
    SERVICE_URLS: `provider=${providerUrl}`,
    PSP_URL: '',
  });
}

async function providerCalls(provider: ProviderProcess, operation: string): Promise<number> {
  const response = await fetch(provider.url.replace(/\/trpc$/, '/metrics'), {
    headers: { authorization: `Bearer ${INTERNAL_TOKEN}` },
  });
  const text = await response.text();
  const lines = text
    .split('\n')
    .filter((l) => l.startsWith('provider_calls_total{') && l.includes(`operation="${operation}"`));
  return lines.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

describe('the provider service in a process of its own', () => {
  it('takes the payments service’s charges over tRPC, and only it reaches the PSP', async () => {
    const provider = await startProviderProcess({ pspUrl: rig.sandbox.url, port: 0 });
    const gateway = await gatewayFor(provider.url);
    try {
      const key = 'split-1';
      const answer = await createUntilFinal(gateway.url, {
        apiKey: TENANT_A.apiKey,
        input: paymentInput(key),
        deadlineMs: SPLIT_FINAL_DEADLINE_MS,
      });
      expect(paymentOf(answer).status).toBe('SUCCEEDED');
      expect(rig.sandbox.charges({ reference: key })).toHaveLength(1);
      expect(await providerCalls(provider, 'createPayment')).toBe(1);
    } finally {
      await gateway.kill('SIGTERM');
      await provider.kill('SIGTERM');
    }
  });

  it('killed while the PSP works on a charge: the retry takes effect once', async () => {
    const port = await freePort();
    let provider = await startProviderProcess({ pspUrl: rig.sandbox.url, port });
    const gateway = await gatewayFor(provider.url);
    try {
      const key = 'split-killed-1';
      const input = paymentInput(key, { paymentMethod: 'pm_card_slow' });
      const first = graphql(gateway.url, {
        apiKey: TENANT_A.apiKey,
        query: CREATE_PAYMENT,
        variables: { input },
      });
      await untilCharging(rig.sandbox, key);
      await provider.kill('SIGKILL');
      // The hop lost the answer: the outcome is unknown, never a success or a failure.
      const lost = await first;
      expect(errorCodeOf(lost)).toBe('OUTCOME_PENDING');
      provider = await startProviderProcess({ pspUrl: rig.sandbox.url, port });
      const answer = await createUntilFinal(gateway.url, {
        apiKey: TENANT_A.apiKey,
        input,
        deadlineMs: SPLIT_FINAL_DEADLINE_MS,
      });
      expect(paymentOf(answer).status).toBe('SUCCEEDED');
      expect(rig.sandbox.charges({ reference: key })).toHaveLength(1);
    } finally {
      await gateway.kill('SIGTERM');
      await provider.kill('SIGTERM');
    }
  });

  it('down: payments are refused as unavailable and charged once it is back', async () => {
    const port = await freePort();
    const gateway = await gatewayFor(`http://127.0.0.1:${port}/trpc`);
    let provider: ProviderProcess | undefined;
    try {
      const key = 'split-down-1';
      const refused = await graphql(gateway.url, {
        apiKey: TENANT_A.apiKey,
        query: CREATE_PAYMENT,
        variables: { input: paymentInput(key) },
      });
      // Every send was refused at connect: nothing reached the PSP, so "try again" is the truth.
      expect(errorCodeOf(refused)).toBe('PROVIDER_UNAVAILABLE');
      expect(rig.sandbox.charges({ reference: key })).toHaveLength(0);
      provider = await startProviderProcess({ pspUrl: rig.sandbox.url, port });
      const answer = await createUntilFinal(gateway.url, {
        apiKey: TENANT_A.apiKey,
        input: paymentInput(key),
        deadlineMs: SPLIT_FINAL_DEADLINE_MS,
      });
      expect(paymentOf(answer).status).toBe('SUCCEEDED');
      expect(rig.sandbox.charges({ reference: key })).toHaveLength(1);
    } finally {
      await gateway.kill('SIGTERM');
      await provider?.kill('SIGTERM');
    }
  });
});
