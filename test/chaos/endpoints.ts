/**
 * Registers each tenant's webhook endpoint (the harness's sink) through the public mutation,
 * before any fault, and hands the signing secret to the sink so it can verify deliveries.
 */
import { classify, send } from './graphql.ts';
import type { TenantName } from './plan.ts';
import { TENANTS, type GatewaySlot } from './stack.ts';
import type { WebhookSink } from './webhook-sink.ts';

const REGISTER = `mutation($input: RegisterWebhookEndpointInput!) {
  registerWebhookEndpoint(input: $input) { endpoint { id secret status } } }`;
const ATTEMPTS = 20;
const RETRY_MS = 250;
const REQUEST_TIMEOUT_MS = 5_000;

export async function registerEndpoints(input: {
  seed: number;
  slots: GatewaySlot[];
  sink: WebhookSink;
}): Promise<void> {
  for (const tenant of ['a', 'b'] as TenantName[]) {
    const variables = {
      input: { idempotencyKey: `hook-${input.seed}-${tenant}`, url: input.sink.url(tenant) },
    };
    let secret: string | undefined;
    for (let attempt = 0; attempt < ATTEMPTS && secret === undefined; attempt++) {
      const url = input.slots.map((slot) => slot.url).find((u) => u !== undefined);
      if (url !== undefined) {
        const answer = classify({
          field: 'registerWebhookEndpoint',
          sent: await send({
            url,
            apiKey: TENANTS[tenant].apiKey,
            query: REGISTER,
            variables,
            timeoutMs: REQUEST_TIMEOUT_MS,
          }),
        });
        const endpoint =
          answer.kind === 'final' ? (answer.data?.['endpoint'] as { secret?: string }) : undefined;
        secret = endpoint?.secret;
      }
      if (secret === undefined) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
    if (secret === undefined)
      throw new Error(`could not register tenant ${tenant}'s webhook endpoint`);
    input.sink.setSecret(tenant, secret);
  }
}
