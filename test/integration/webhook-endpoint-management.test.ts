import { describe, expect, it } from 'vitest';
import { drainOutbox as drainEveryConsumer } from '../support/event-log.ts';
import { errorCodeOf, graphql, type GraphQLAnswer } from '../support/graphql-client.ts';
import { REGISTER_WEBHOOK_ENDPOINT } from '../support/operations.ts';
import {
  createPaymentOn,
  paymentInput,
  TENANT_A,
  TENANT_B,
  useTestStack,
} from '../support/test-stack.ts';
import { useWebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * A merchant manages its webhook endpoints (docs/api.md §2): lists them (never a secret),
 * enables, disables and filters them, rotates the signing secret with an overlap during which
 * both secrets sign, pages through deliveries, redelivers an event under its webhook-id, and
 * deletes an endpoint. Every mutation is idempotent by key: a replay answers the same.
 */
const receiver = useWebhookReceiver();
const stack = useTestStack('webhook-management');

const SUMMARY = 'id url status disabledReason eventTypes createdAt updatedAt';
const LIST = `{ webhookEndpoints { ${SUMMARY} } }`;
const UPDATE = `mutation($input: UpdateWebhookEndpointInput!) {
  updateWebhookEndpoint(input: $input) { endpoint { ${SUMMARY} } idempotency { replayed } } }`;
const DELETE = `mutation($input: DeleteWebhookEndpointInput!) {
  deleteWebhookEndpoint(input: $input) { deletedEndpointId idempotency { replayed } } }`;
const ROTATE = `mutation($input: RotateWebhookSecretInput!) {
  rotateWebhookSecret(input: $input) {
    endpoint { id secret } previousSecretExpiresAt idempotency { replayed } } }`;
const DELIVERY = 'eventId eventType status attempts lastError nextAttemptAt deliveredAt';
const DELIVERIES = `query($endpointId: ID!, $first: Int, $after: String) {
  webhookDeliveries(endpointId: $endpointId, first: $first, after: $after) {
    edges { cursor node { ${DELIVERY} } } pageInfo { hasNextPage endCursor } } }`;
const REDELIVER = `mutation($input: RedeliverWebhookEventInput!) {
  redeliverWebhookEvent(input: $input) { delivery { ${DELIVERY} } idempotency { replayed } } }`;

const gql = (query: string, variables: Record<string, unknown> = {}, apiKey = TENANT_A.apiKey) =>
  graphql(stack.app.url, { apiKey, query, variables });

function field<T>(answer: GraphQLAnswer, name: string): T {
  const value = answer.body.data?.[name];
  if (value === undefined || value === null)
    throw new Error(`no ${name} in ${JSON.stringify(answer.body)}`);
  return value as T;
}

async function drainOutbox(): Promise<void> {
  await drainEveryConsumer(stack.db, [stack.app.services.dispatcher]);
}

let payments = 0;
/** A paid payment, its events delivered: returns the webhook-ids the receiver got for it. */
async function pay(): Promise<Array<{ id: string; type: string; verified: boolean }>> {
  payments += 1;
  const before = receiver.received.length;
  await createPaymentOn(stack, paymentInput(`hooked-${payments}`));
  await drainOutbox();
  return receiver.received.slice(before);
}

async function register(key: string): Promise<{ id: string; secret: string }> {
  const answer = await gql(REGISTER_WEBHOOK_ENDPOINT, {
    input: { idempotencyKey: key, url: receiver.url },
  });
  return field<{ endpoint: { id: string; secret: string } }>(answer, 'registerWebhookEndpoint')
    .endpoint;
}

describe('webhook endpoint management', () => {
  it('lists endpoints without secrets; another tenant sees none and changes none', async () => {
    const endpoint = await register('manage-list');
    receiver.secret = endpoint.secret;
    const listed = await gql(LIST);
    expect(field<Array<{ id: string }>>(listed, 'webhookEndpoints')).toContainEqual(
      expect.objectContaining({ id: endpoint.id, status: 'enabled', eventTypes: null }),
    );
    expect(JSON.stringify(listed.body)).not.toContain(endpoint.secret);
    expect(field<unknown[]>(await gql(LIST, {}, TENANT_B.apiKey), 'webhookEndpoints')).toEqual([]);
    const foreign = await gql(
      UPDATE,
      { input: { idempotencyKey: 'b-disables', endpointId: endpoint.id, enabled: false } },
      TENANT_B.apiKey,
    );
    expect(errorCodeOf(foreign)).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    expect(foreign.status).toBe(404);
  });

  it('disables and enables an endpoint, once per key; nothing is delivered while disabled', async () => {
    const [endpoint] = field<Array<{ id: string }>>(await gql(LIST), 'webhookEndpoints');
    const input = { idempotencyKey: 'disable-1', endpointId: endpoint!.id, enabled: false };
    const disabled = await gql(UPDATE, { input });
    expect(field(disabled, 'updateWebhookEndpoint')).toMatchObject({
      endpoint: { status: 'disabled', disabledReason: 'disabled by the merchant' },
      idempotency: { replayed: false },
    });
    const replay = await gql(UPDATE, { input });
    expect(replay.body.data).toEqual({
      updateWebhookEndpoint: {
        ...field<object>(disabled, 'updateWebhookEndpoint'),
        idempotency: { replayed: true },
      },
    });
    expect(await pay()).toEqual([]);
    await gql(UPDATE, {
      input: { idempotencyKey: 'enable-1', endpointId: endpoint!.id, enabled: true },
    });
    expect((await pay()).map((w) => w.type)).toEqual(['payment.succeeded']);
  });

  it('delivers only the event types an endpoint subscribes to; unknown types store nothing', async () => {
    const [endpoint] = field<Array<{ id: string }>>(await gql(LIST), 'webhookEndpoints');
    const bad = await gql(UPDATE, {
      input: { idempotencyKey: 'types-1', endpointId: endpoint!.id, eventTypes: ['payment.nope'] },
    });
    expect(errorCodeOf(bad)).toBe('BAD_USER_INPUT');
    const only = await gql(UPDATE, {
      input: {
        idempotencyKey: 'types-1',
        endpointId: endpoint!.id,
        eventTypes: ['refund.succeeded'],
      },
    });
    expect(field(only, 'updateWebhookEndpoint')).toMatchObject({
      endpoint: { eventTypes: ['refund.succeeded'] },
    });
    expect(await pay()).toEqual([]);
    await gql(UPDATE, {
      input: { idempotencyKey: 'types-2', endpointId: endpoint!.id, eventTypes: null },
    });
    expect((await pay()).map((w) => w.type)).toEqual(['payment.succeeded']);
  });

  it('rotates the secret: the replay shows the same one, and both sign until the overlap ends', async () => {
    const [endpoint] = field<Array<{ id: string }>>(await gql(LIST), 'webhookEndpoints');
    const old = receiver.secret;
    const input = { idempotencyKey: 'rotate-1', endpointId: endpoint!.id, overlapSeconds: 3_600 };
    const rotated = field<{ endpoint: { secret: string } }>(
      await gql(ROTATE, { input }),
      'rotateWebhookSecret',
    );
    expect(rotated.endpoint.secret).toMatch(/^whsec_/);
    expect(rotated.endpoint.secret).not.toBe(old);
    const replay = field<{ endpoint: { secret: string } }>(
      await gql(ROTATE, { input }),
      'rotateWebhookSecret',
    );
    expect(replay.endpoint.secret).toBe(rotated.endpoint.secret);

    expect((await pay()).map((w) => w.verified)).toEqual([true]); // verified with the old secret
    receiver.secret = rotated.endpoint.secret;
    expect((await pay()).map((w) => w.verified)).toEqual([true]); // and with the new one

    const abrupt = field<{ endpoint: { secret: string } }>(
      await gql(ROTATE, {
        input: { idempotencyKey: 'rotate-2', endpointId: endpoint!.id, overlapSeconds: 0 },
      }),
      'rotateWebhookSecret',
    );
    expect((await pay()).map((w) => w.verified)).toEqual([false]); // the replaced one no longer signs
    receiver.secret = abrupt.endpoint.secret;
    expect((await pay()).map((w) => w.verified)).toEqual([true]);
  });

  it('pages through deliveries with signed cursors, and redelivers an event under its webhook-id', async () => {
    const [endpoint] = field<Array<{ id: string }>>(await gql(LIST), 'webhookEndpoints');
    type Page = {
      edges: Array<{ cursor: string; node: { eventId: string; status: string; attempts: number } }>;
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
    };
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const page: Page = field<Page>(
        await gql(DELIVERIES, { endpointId: endpoint!.id, first: 2, after }),
        'webhookDeliveries',
      );
      expect(page.edges.length).toBeLessThanOrEqual(2);
      seen.push(...page.edges.map((e) => e.node.eventId));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    const delivered = receiver.received.map((w) => w.id);
    expect(new Set(seen)).toEqual(new Set(delivered));
    expect([...seen].sort()).toEqual(seen);

    const forged = await gql(DELIVERIES, {
      endpointId: endpoint!.id,
      first: 2,
      after: 'abc.def.ghi',
    });
    expect(errorCodeOf(forged)).toBe('BAD_USER_INPUT');

    const eventId = seen[0]!;
    const before = receiver.received.length;
    const input = { idempotencyKey: 'redeliver-1', endpointId: endpoint!.id, eventId };
    const again = await gql(REDELIVER, { input });
    expect(field(again, 'redeliverWebhookEvent')).toMatchObject({
      delivery: { eventId, status: 'pending', attempts: 0 },
    });
    await drainOutbox();
    expect(receiver.received.slice(before).map((w) => w.id)).toEqual([eventId]);
    expect(field(await gql(REDELIVER, { input }), 'redeliverWebhookEvent')).toMatchObject({
      idempotency: { replayed: true },
    });
    await drainOutbox();
    expect(receiver.received.length).toBe(before + 1); // the replay redelivered nothing

    const unknown = {
      idempotencyKey: 'redeliver-2',
      endpointId: endpoint!.id,
      eventId: 'evt_nope',
    };
    expect(errorCodeOf(await gql(REDELIVER, { input: unknown }))).toBe(
      'WEBHOOK_DELIVERY_NOT_FOUND',
    );
    const replayed = await gql(REDELIVER, { input: unknown });
    expect(errorCodeOf(replayed)).toBe('WEBHOOK_DELIVERY_NOT_FOUND');
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  });

  it('deletes an endpoint: gone from the listing, nothing delivered, its registration still replays', async () => {
    const [endpoint] = field<Array<{ id: string }>>(await gql(LIST), 'webhookEndpoints');
    const input = { idempotencyKey: 'delete-1', endpointId: endpoint!.id };
    expect(field(await gql(DELETE, { input }), 'deleteWebhookEndpoint')).toMatchObject({
      deletedEndpointId: endpoint!.id,
      idempotency: { replayed: false },
    });
    expect(field(await gql(DELETE, { input }), 'deleteWebhookEndpoint')).toMatchObject({
      idempotency: { replayed: true },
    });
    expect(field<unknown[]>(await gql(LIST), 'webhookEndpoints')).toEqual([]);
    expect(await pay()).toEqual([]);
    const after = await gql(UPDATE, {
      input: { idempotencyKey: 'after-delete', endpointId: endpoint!.id, enabled: true },
    });
    expect(errorCodeOf(after)).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    const registration = await gql(REGISTER_WEBHOOK_ENDPOINT, {
      input: { idempotencyKey: 'manage-list', url: receiver.url },
    });
    expect(field(registration, 'registerWebhookEndpoint')).toMatchObject({
      endpoint: { id: endpoint!.id },
      idempotency: { replayed: true },
    });
  });
});
