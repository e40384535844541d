import { describe, expect, it } from 'vitest';
import { drainOutbox } from '../support/event-log.ts';
import { graphql } from '../support/graphql-client.ts';
import { REGISTER_WEBHOOK_ENDPOINT } from '../support/operations.ts';
import { createPaymentOn, paymentInput, TENANT_B, useTestStack } from '../support/test-stack.ts';
import { useWebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Deliveries only for consumers that exist (migrations/0014): a tenant with no webhook endpoint
 * gets no delivery for the webhook fan-out, which would be claimed and run to do nothing; from
 * its first endpoint on, its events are fanned out and arrive, signed. The ledger and receipts
 * read the event log (migrations/0016): an event names them and they get no delivery row at all.
 */
const receiver = useWebhookReceiver();
const stack = useTestStack('outbox-subscriptions');

/** The consumers a payment's event was written for: by delivery row, or by the log (0016). */
async function consumersOf(reference: string): Promise<{ rows: string[]; log: string[] }> {
  const { rows } = await stack.db.query<{ rows: string[]; log: string[] }>(
    `SELECT ARRAY(SELECT d.consumer FROM outbox_deliveries d
                   WHERE d.tenant_id = e.tenant_id AND d.event_id = e.id ORDER BY 1) AS rows,
            e.log_consumers AS log
       FROM outbox_events e
       JOIN payments p ON p.tenant_id = e.tenant_id AND e.id = 'evt_payment_' || p.id || '_succeeded'
      WHERE p.reference = $1`,
    [reference],
  );
  return rows[0] ?? { rows: [], log: [] };
}

describe('the webhook fan-out', () => {
  it('is written only for a tenant with an endpoint, from its first one on', async () => {
    await createPaymentOn(stack, paymentInput('before-any-endpoint'), TENANT_B.apiKey);
    expect(await consumersOf('before-any-endpoint')).toEqual({
      rows: [],
      log: ['ledger', 'receipts'],
    });

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
    expect(await consumersOf('after-an-endpoint')).toEqual({
      rows: ['webhooks'],
      log: ['ledger', 'receipts'],
    });
    await drainOutbox(stack.db, [stack.app.services.dispatcher]);
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
