/**
 * Registers each tenant's webhook endpoint (the harness's sink) through the SDK, before any
 * fault, and hands the signing secret to the sink so it can verify deliveries.
 */
import { createPaymentsClient } from '../../packages/client/src/index.ts';
import { createGatewayFetch } from './gateway-fetch.ts';
import type { TenantName } from './plan.ts';
import { Prng } from './prng.ts';
import { TENANTS, type GatewaySlot } from './stack.ts';
import type { WebhookSink } from './webhook-sink.ts';

/** Before any fault a registration answers at once; these only ride out a slow first start. */
const ATTEMPTS = 20;
const BACKOFF = { baseMs: 250, capMs: 250 };
const REQUEST_TIMEOUT_MS = 5_000;
const REGISTRATION_TIMEOUT_MS = 120_000;

export async function registerEndpoints(input: {
  seed: number;
  slots: GatewaySlot[];
  sink: WebhookSink;
}): Promise<void> {
  const rng = Prng.derive(input.seed, 'endpoints');
  for (const tenant of ['a', 'b'] as TenantName[]) {
    const client = createPaymentsClient({
      url: 'http://gateway.chaos.invalid/graphql',
      apiKey: TENANTS[tenant].apiKey,
      fetch: createGatewayFetch({ slots: input.slots, rng }),
      random: () => rng.next(),
      maxAttempts: ATTEMPTS,
      backoff: BACKOFF,
      attemptTimeoutMs: REQUEST_TIMEOUT_MS,
      timeoutMs: REGISTRATION_TIMEOUT_MS,
    });
    const { endpoint } = await client.registerWebhookEndpoint(
      { url: input.sink.url(tenant) },
      { idempotencyKey: `hook-${input.seed}-${tenant}` },
    );
    input.sink.setSecret(tenant, endpoint.secret);
  }
}
