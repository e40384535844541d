import { describe, expect, it } from 'vitest';
import { graphql } from '../support/graphql-client.ts';
import { REGISTER_WEBHOOK_ENDPOINT } from '../support/operations.ts';
import { createPaymentOn, paymentInput, TENANT_B, useTestStack } from '../support/test-stack.ts';
import { useWebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Deliveries only for consumers that exist (migrations/0014): a tenant with no webhook endpoint
 * gets no delivery for the webhook fan-out, which would be claimed and run to do nothing; from
 * its first endpoint on, its events are fanned out and arrive, signed.
 */
const receiver = useWebhookReceiver();
const stack = useTestStack('outbox-subscriptions');

async function consumersOf(reference: string): Promise<string[]> {
  const { rows } = await stack.db.query<{ consumer: string }>(
    `SELECT d.consumer FROM outbox_deliveries d
       JOIN payments p ON p.tenant_id = d.tenant_id AND d.event_id = 'evt_payment_' || p.id || '_succeeded'
      WHERE p.reference = $1 ORDER BY d.consumer`,
    [reference],
  );
  return rows.map((r) => r.consumer);
}

describe('the webhook fan-out', () => {
  it('is written only for a tenant with an endpoint, from its first one on', async () => {
    await createPaymentOn(stack, paymentInput('before-any-endpoint'), TENANT_B.apiKey);
    expect(await consumersOf('before-any-endpoint')).toEqual(['ledger', 'receipts']);

    const registered = await graphql(stack.app.url, {
      apiKey: TENANT_B.apiKey,
      query: REGISTER_WEBHOOK_ENDPOINT,
      variables: { input: { idempotencyKey: 'subscribe-b', url: receiver.url } },
    });
    const endpoint = (
      registered.body.data?.['registerWebhookEndpoint'] as { endpoint: { secret: string } }
    ).endpoint;
    receiver.secret = endpoint.secret;

    await createPaymentOn(stack, paymentInput('after-an-endpoint'), TENANT_B.apiKey);
    expect(await consumersOf('after-an-endpoint')).toEqual(['ledger', 'receipts', 'webhooks']);
    for (let i = 0; i < 50 && (await stack.app.services.dispatcher.dispatchOnce()) > 0; i++);
    expect(receiver.received).toEqual([
      expect.objectContaining({ type: 'payment.succeeded', verified: true }),
    ]);
    // Marked with their batch: nothing delivered is left pending, to be delivered again.
    const pending = await stack.db.query(
      `SELECT 1 FROM outbox_deliveries WHERE status <> 'delivered'`,
    );
    expect(pending.rowCount).toBe(0);
  });
});
