import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import type { GatewayProcess, ServiceProcess } from '../support/gateway-process.ts';
import {
  RECOVERY_WORKER_ON,
  useGatewayProcessRig,
  SPLIT_FINAL_DEADLINE_MS,
  GATEWAY_SIDE,
} from '../support/gateway-process-rig.ts';
import { errorCodeOf, graphql, paymentOf } from '../support/graphql-client.ts';
import { untilCharging } from '../support/until-charging.ts';
import {
  CAPTURE_PAYMENT,
  CREATE_PAYMENT,
  createUntilFinal,
  PAYMENTS_PAGE,
} from '../support/operations.ts';
import {
  freePort,
  startProviderProcess,
  type ProviderProcess,
} from '../support/provider-process.ts';
import { paymentInput, TENANT_A } from '../support/test-stack.ts';

/**
 * The split topology, each part its own process: two gateways, two payments-service processes
 * (each gateway reaches one) and one provider-service process. The sandbox PSP runs in the test,
 * so a killed process takes nothing of the PSP's books with it.
 */
const rig = useGatewayProcessRig('split_payments');

function gatewayFor(paymentsUrl: string): Promise<GatewayProcess> {
  return rig.startGateway({
    ...RECOVERY_WORKER_ON,
    SERVICES: GATEWAY_SIDE,
    SERVICE_URLS: `payments=${paymentsUrl}`,
    PSP_URL: '',
  });
}

function paymentsAt(port: number, providerUrl: string): Promise<ServiceProcess> {
  return rig.startServices({
    services: 'payments',
    serviceUrls: `provider=${providerUrl}`,
    port,
    env: RECOVERY_WORKER_ON,
  });
}

/**
 * A proxy in front of the tRPC endpoint at `url` that cuts the first answer on its way back,
 * after the service ran the call, and passes everything after; its URL is a tRPC endpoint too.
 */
async function dropFirstAnswer(url: string): Promise<FaultProxy & { trpcUrl: string }> {
  const proxy = await startFaultProxy({
    target: url.replace(/\/trpc$/, ''),
    seed: 1,
    weights: { pass: 1, 'drop-response': 0, 'reset-before': 0, 'reset-after': 0, delay: 0 },
    delayMs: { min: 0, max: 0 },
    script: ['drop-response'],
  });
  return Object.assign(proxy, { trpcUrl: `${proxy.url}/trpc` });
}

const create = (gateway: GatewayProcess, input: Record<string, unknown>) =>
  graphql(gateway.url, { apiKey: TENANT_A.apiKey, query: CREATE_PAYMENT, variables: { input } });

describe('two gateways, two payments processes and a provider process', () => {
  let provider: ProviderProcess;
  let payments: ServiceProcess[] = [];
  let gateways: GatewayProcess[] = [];
  const stopAll = async () => {
    await Promise.all(gateways.map((g) => g.kill('SIGTERM')));
    await Promise.all(payments.map((p) => p.kill('SIGTERM')));
    gateways = [];
    payments = [];
  };

  /** Two payments processes, and two gateways each reaching one of them. */
  const startTwoOfEach = async () => {
    payments = [
      await paymentsAt(await freePort(), provider.url),
      await paymentsAt(await freePort(), provider.url),
    ];
    gateways = [await gatewayFor(payments[0]!.url), await gatewayFor(payments[1]!.url)];
  };

  beforeAll(async () => {
    provider = await startProviderProcess({ pspUrl: rig.sandbox.url, port: 0 });
  });
  afterAll(async () => {
    await stopAll();
    await provider?.kill('SIGTERM');
  });

  it('runs each payment in a payments process, and either gateway acts on it after', async () => {
    await startTwoOfEach();
    try {
      const key = 'split-payments-1';
      const created = await create(gateways[0]!, paymentInput(key, { captureMethod: 'MANUAL' }));
      const payment = paymentOf(created);
      expect(payment.status).toBe('REQUIRES_CAPTURE');
      // The other gateway, through the other payments process, captures what the first made.
      const captured = await graphql(gateways[1]!.url, {
        apiKey: TENANT_A.apiKey,
        query: CAPTURE_PAYMENT,
        variables: { input: { paymentId: payment.id, idempotencyKey: `${key}-capture` } },
      });
      const capture = captured.body.data?.['capturePayment'] as { payment: { status: string } };
      expect(capture.payment.status).toBe('SUCCEEDED');
      expect(rig.sandbox.charges({ reference: key })).toHaveLength(1);
      // The payments service's refusal crosses the hop with its code and field, not masked.
      const refused = await graphql(gateways[1]!.url, {
        apiKey: TENANT_A.apiKey,
        query: PAYMENTS_PAGE,
        variables: { first: 10, after: 'not-a-cursor' },
      });
      expect(errorCodeOf(refused)).toBe('BAD_USER_INPUT');
      expect(refused.body.errors?.[0]?.extensions?.['field']).toBe('after');
    } finally {
      await stopAll();
    }
  });

  it('carries a client’s Prefer: wait across the hop: a duplicate gets the first’s answer', async () => {
    await startTwoOfEach();
    try {
      const input = paymentInput('split-payments-wait', { paymentMethod: 'pm_card_slow' });
      const first = create(gateways[0]!, input);
      await untilCharging(rig.sandbox, 'split-payments-wait');
      // Through the other gateway and payments process, while the first still runs.
      const waited = await graphql(gateways[1]!.url, {
        apiKey: TENANT_A.apiKey,
        query: CREATE_PAYMENT,
        variables: { input },
        headers: { prefer: 'wait=10' },
      });
      expect(waited.headers.get('preference-applied')).toBe('wait=10');
      expect(paymentOf(waited).status).toBe('SUCCEEDED');
      expect(paymentOf(await first).id).toBe(paymentOf(waited).id);
    } finally {
      await stopAll();
    }
  });

  it('a payments process SIGKILLed mid-charge: the retry through the other takes effect once', async () => {
    await startTwoOfEach();
    try {
      const key = 'split-payments-killed';
      const input = paymentInput(key, { paymentMethod: 'pm_card_slow' });
      const first = create(gateways[0]!, input);
      await untilCharging(rig.sandbox, key);
      await payments[0]!.kill('SIGKILL');
      // The hop lost the answer and no resend found a process: retry later, with the same key.
      expect(errorCodeOf(await first)).toBe('SERVICE_UNAVAILABLE');
      const answer = await createUntilFinal(gateways[1]!.url, {
        apiKey: TENANT_A.apiKey,
        input,
        deadlineMs: SPLIT_FINAL_DEADLINE_MS,
      });
      expect(paymentOf(answer).status).toBe('SUCCEEDED');
      expect(rig.sandbox.charges({ reference: key })).toHaveLength(1);
    } finally {
      await stopAll();
    }
  });

  it('an answer lost between a gateway and payments is sent again and takes effect once', async () => {
    payments = [await paymentsAt(await freePort(), provider.url)];
    let hop: (FaultProxy & { trpcUrl: string }) | undefined;
    try {
      // The first call's answer is cut on its way back, after the payments process ran it.
      hop = await dropFirstAnswer(payments[0]!.url);
      gateways = [await gatewayFor(hop.trpcUrl)];
      const key = 'split-payments-lost-answer';
      const answer = await create(gateways[0]!, paymentInput(key));
      expect(hop.counts['drop-response']).toBe(1);
      expect(paymentOf(answer).status).toBe('SUCCEEDED');
      expect(rig.sandbox.charges({ reference: key })).toHaveLength(1);
    } finally {
      await stopAll();
      await hop?.close();
    }
  });

  it('an answer lost between payments and the provider is settled under its key, charged once', async () => {
    let hop: (FaultProxy & { trpcUrl: string }) | undefined;
    try {
      hop = await dropFirstAnswer(provider.url);
      payments = [await paymentsAt(await freePort(), hop.trpcUrl)];
      gateways = [await gatewayFor(payments[0]!.url)];
      const key = 'split-provider-lost-answer';
      const answer = await createUntilFinal(gateways[0]!.url, {
        apiKey: TENANT_A.apiKey,
        input: paymentInput(key),
        deadlineMs: SPLIT_FINAL_DEADLINE_MS,
      });
      expect(hop.counts['drop-response']).toBe(1);
      expect(paymentOf(answer).status).toBe('SUCCEEDED');
      expect(rig.sandbox.charges({ reference: key })).toHaveLength(1);
    } finally {
      await stopAll();
      await hop?.close();
    }
  });
});
