import { describe, expect, it } from 'vitest';
import { cursorHasPassed } from '../support/event-log.ts';
import { useGatewayProcessRig } from '../support/gateway-process-rig.ts';
import { graphql, paymentOf } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { paymentInput, TENANT_A } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';
import { useWebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * A real gateway SIGKILLed between an outbox consumer's effect and its record of it (the
 * ledger's cursor advance, a webhook delivery's mark): after a restart the delivery is made
 * again — the ledger still holds one posting, and the merchant's receiver sees the same
 * webhook-id twice, both signatures valid.
 */
const rig = useGatewayProcessRig('outbox-crash');
/** The dispatcher's claim lease: a dead dispatcher's deliveries are due again after this. */
const CLAIM_LEASE_MS = '1000';
const ENV = { OUTBOX_CLAIM_LEASE_MS: CLAIM_LEASE_MS, RECOVERY_INTERVAL_MS: '3600000' };
const receiver = useWebhookReceiver({ answerStatus: 204 });

async function waitFor(condition: () => Promise<boolean>, what: string): Promise<void> {
  await waitUntil(condition, { timeoutMs: 20_000, intervalMs: 100, what });
}

async function deliveryStatus(
  eventId: string,
  consumerPrefix: string,
): Promise<string | undefined> {
  const { rows } = await rig.db.query<{ status: string }>(
    `SELECT status FROM outbox_deliveries WHERE event_id = $1 AND consumer LIKE $2`,
    [eventId, `${consumerPrefix}%`],
  );
  return rows[0]?.status;
}

/**
 * A gateway armed to die at the outbox fault `point` takes one payment and is SIGKILLed there,
 * right after the consumer's effect; the payment and its succeeded event.
 */
async function payThroughGatewayKilledAt(
  point: string,
  key: string,
): Promise<{ paymentId: string; eventId: string }> {
  const victim = await rig.startGateway({ ...ENV, FAULT_POINTS: `${point}=crash` });
  const payment = paymentOf(
    await graphql(victim.url, {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: { input: paymentInput(key) },
    }),
  );
  expect(await victim.exited).toMatchObject({ signal: 'SIGKILL' });
  return { paymentId: payment.id, eventId: `evt_payment_${payment.id}_succeeded` };
}

describe('SIGKILL between an outbox effect and its mark', () => {
  it('the ledger posting is made once, though delivered twice', async () => {
    // Dies right after posting.
    const { paymentId, eventId } = await payThroughGatewayKilledAt(
      'outbox.ledger.after-handle',
      'outbox-ledger',
    );
    // Posted, but the ledger's cursor is still before the event: it is taken again.
    const { rows: before } = await rig.db.query(
      `SELECT 1 FROM ledger_postings WHERE payment_id = $1`,
      [paymentId],
    );
    expect(before).toHaveLength(1);
    expect(await cursorHasPassed(rig.db, 'ledger', eventId)).toBe(false);
    await rig.withGateway(ENV, async () => {
      await waitFor(
        async () => cursorHasPassed(rig.db, 'ledger', eventId),
        'the ledger cursor to pass the event',
      );
      expect(await deliveryStatus(eventId, 'ledger')).toBeUndefined();
      const { rows } = await rig.db.query(
        `SELECT kind, debit_account, credit_account FROM ledger_postings WHERE payment_id = $1`,
        [paymentId],
      );
      expect(rows).toEqual([
        { kind: 'capture', debit_account: 'psp_clearing', credit_account: 'merchant_balance' },
      ]);
    });
  });

  it('the merchant sees the same webhook-id again, signed', async () => {
    await rig.withGateway(ENV, async (setup) => {
      const registered = await graphql(setup.url, {
        apiKey: TENANT_A.apiKey,
        query: `mutation($input: RegisterWebhookEndpointInput!) { registerWebhookEndpoint(input: $input) { endpoint { secret } } }`,
        variables: { input: { idempotencyKey: 'outbox-hook', url: receiver.url } },
      });
      receiver.secret = (
        registered.body.data?.['registerWebhookEndpoint'] as { endpoint: { secret: string } }
      ).endpoint.secret;
    });
    // Dies right after sending.
    const { eventId } = await payThroughGatewayKilledAt(
      'outbox.webhook.after-handle',
      'outbox-webhook',
    );
    expect(receiver.received.filter((r) => r.id === eventId)).toHaveLength(1);
    await rig.withGateway(ENV, async () => {
      await waitFor(
        async () => (await deliveryStatus(eventId, 'webhook:')) === 'delivered',
        'the webhook delivery',
      );
      const deliveries = receiver.received.filter((r) => r.id === eventId);
      expect(deliveries).toHaveLength(2);
      expect(deliveries.every((d) => d.verified)).toBe(true);
    });
  });
});
