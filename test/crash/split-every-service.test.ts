import { describe, expect, it } from 'vitest';
import type { ServiceProcess } from '../support/gateway-process.ts';
import { RECOVERY_WORKER_ON, useGatewayProcessRig } from '../support/gateway-process-rig.ts';
import { errorCodeOf, graphql, paymentOf } from '../support/graphql-client.ts';
import { BALANCES, CREATE_PAYMENT, REGISTER_WEBHOOK_ENDPOINT } from '../support/operations.ts';
import { freePort, startProviderProcess } from '../support/provider-process.ts';
import { INTERNAL_TOKEN, paymentInput, TENANT_A } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';
import { useWebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Every service in a process of its own, each a real process: a gateway that runs nothing but
 * the edge, payments, the provider, and a back office of ledger, notifications, tenants and ops.
 * A merchant's day crosses every hop: authentication (tenants), a webhook endpoint
 * (notifications), a payment (payments → provider), its balance (ledger, fed by the back
 * office's outbox dispatcher) and its webhook.
 */
const rig = useGatewayProcessRig('split_every_service');
const receiver = useWebhookReceiver();

/** Long enough for the back office's dispatcher to post and deliver what a payment wrote. */
const SETTLED_MS = 20_000;

/**
 * How many commands of `operation` a process admitted and ran, from its /metrics: which process
 * did the work, not merely that it was done.
 */
async function executed(baseUrl: string, operation: string): Promise<number> {
  const response = await fetch(`${baseUrl.replace(/\/trpc$/, '')}/metrics`, {
    headers: { authorization: `Bearer ${INTERNAL_TOKEN}` },
  });
  const line = (await response.text())
    .split('\n')
    .find(
      (l) =>
        l.startsWith('idempotency_requests_total{') &&
        l.includes(`operation="${operation}"`) &&
        l.includes('outcome="executed"'),
    );
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe('every service in a process of its own', () => {
  it('serves a merchant across every hop, and refuses a bad key through tenants apart', async () => {
    const provider = await startProviderProcess({ pspUrl: rig.sandbox.url, port: 0 });
    const running: ServiceProcess[] = [provider];
    try {
      const payments = await rig.startServices({
        services: 'payments',
        serviceUrls: `provider=${provider.url}`,
        port: await freePort(),
        env: RECOVERY_WORKER_ON,
      });
      running.push(payments);
      const backOffice = await rig.startServices({
        services: 'ledger,notifications,tenants,ops',
        serviceUrls: `provider=${provider.url}`,
        port: await freePort(),
        env: RECOVERY_WORKER_ON,
      });
      running.push(backOffice);
      const gateway = await rig.startGateway({
        ...RECOVERY_WORKER_ON,
        SERVICES: 'gateway',
        SERVICE_URLS: ['payments', 'tenants', 'ledger', 'notifications']
          .map((name) => `${name}=${name === 'payments' ? payments.url : backOffice.url}`)
          .join(','),
        PSP_URL: '',
      });
      running.push(gateway);

      const refused = await graphql(gateway.url, {
        apiKey: 'sk_test_nobody_0000000000000000000',
        query: BALANCES,
      });
      expect(errorCodeOf(refused)).toBe('UNAUTHENTICATED');

      const registered = await graphql(gateway.url, {
        apiKey: TENANT_A.apiKey,
        query: REGISTER_WEBHOOK_ENDPOINT,
        variables: { input: { idempotencyKey: 'every-hook', url: receiver.url } },
      });
      const endpoint = registered.body.data?.['registerWebhookEndpoint'] as {
        endpoint: { secret: string };
      };
      receiver.secret = endpoint.endpoint.secret;

      const created = await graphql(gateway.url, {
        apiKey: TENANT_A.apiKey,
        query: CREATE_PAYMENT,
        variables: { input: paymentInput('every-1', { amount: '12.34' }) },
      });
      expect(paymentOf(created).status).toBe('SUCCEEDED');
      expect(rig.sandbox.charges({ reference: 'every-1' })).toHaveLength(1);

      await waitUntil(
        async () => {
          const answer = await graphql(gateway.url, { apiKey: TENANT_A.apiKey, query: BALANCES });
          const balances = answer.body.data?.['balances'] as Array<{ available: string }>;
          return balances?.some((b) => b.available === '12.34');
        },
        { timeoutMs: SETTLED_MS, what: 'the balance to show the payment' },
      );
      const delivered = await waitUntil(
        () => receiver.received.find((w) => w.type === 'payment.succeeded'),
        { timeoutMs: SETTLED_MS, what: 'the payment.succeeded webhook' },
      );
      expect(delivered.verified).toBe(true);
      // Each command ran in the process of its service, none in the gateway's.
      expect(await executed(payments.url, 'createPayment')).toBe(1);
      expect(await executed(backOffice.url, 'registerWebhookEndpoint')).toBe(1);
      expect(await executed(gateway.url, 'createPayment')).toBe(0);
      expect(await executed(gateway.url, 'registerWebhookEndpoint')).toBe(0);
      // A process's /trpc serves only what it runs: ops runs in the back office, not here.
      const auth = { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } };
      expect((await fetch(`${gateway.url}/trpc/ops.dataKeys`, auth)).status).toBe(404);
      expect((await fetch(`${backOffice.url}/ops.dataKeys`, auth)).status).toBe(200);
    } finally {
      for (const process of running.reverse()) await process.kill('SIGTERM');
    }
  });
});
