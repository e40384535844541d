import { describe, expect, it } from 'vitest';
import { OutboxDispatcher } from '../../lib/outbox/dispatcher.ts';
import {
  drainOutbox as drainEveryConsumer,
  eventsBehindCursors,
  rewindCursors,
} from '../support/event-log.ts';
import { outboxConsumers } from '../../app/compose.ts';
import { errorCodeOf, graphql, paymentOf } from '../support/graphql-client.ts';
import { createPaymentOn, paymentInput, TENANT_A, useTestStack } from '../support/test-stack.ts';
import {
  BALANCES,
  CANCEL_PAYMENT as CANCEL,
  CAPTURE_PAYMENT as CAPTURE,
  REFUND_PAYMENT as REFUND,
  REGISTER_WEBHOOK_ENDPOINT as REGISTER,
} from '../support/operations.ts';
import { useWebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * The ledger, the transactional outbox and webhooks, after a mixed workload: every money
 * movement posted exactly once, the books balanced, balances equal to what the payments say,
 * every event delivered at least once to a merchant's receiver that verifies Standard Webhooks
 * signatures, and redeliveries carrying the same webhook-id.
 */
const receiver = useWebhookReceiver();
const stack = useTestStack('ledger-outbox');

const gql = (query: string, variables: Record<string, unknown> = {}) =>
  graphql(stack.app.url, { apiKey: TENANT_A.apiKey, query, variables });

async function drainOutbox(): Promise<void> {
  await drainEveryConsumer(stack.db, [stack.app.services.dispatcher]);
}

describe('webhook endpoints', () => {
  it('are registered once per key; the replay returns the same endpoint and secret', async () => {
    const first = await gql(REGISTER, { input: { idempotencyKey: 'hook-1', url: receiver.url } });
    const endpoint = (
      first.body.data?.['registerWebhookEndpoint'] as {
        endpoint: { id: string; secret: string; status: string };
      }
    ).endpoint;
    expect(endpoint.secret).toMatch(/^whsec_/);
    receiver.secret = endpoint.secret;
    const again = await gql(REGISTER, { input: { idempotencyKey: 'hook-1', url: receiver.url } });
    expect(again.body.data?.['registerWebhookEndpoint']).toMatchObject({
      endpoint,
      idempotency: { replayed: true },
    });
    expect(
      errorCodeOf(
        await gql(REGISTER, {
          input: { idempotencyKey: 'hook-2', url: 'http://example.com/hooks' },
        }),
      ),
    ).toBe('BAD_USER_INPUT');
  });
});

describe('after a mixed workload', () => {
  it('posts every movement once, balances the books, matches the payments, and delivers every event, signed', async () => {
    const auto = [];
    for (const [i, [amount, currency]] of [
      ['10.00', 'EUR'],
      ['25.50', 'EUR'],
      ['1200', 'JPY'],
      ['3.000', 'KWD'],
    ].entries()) {
      auto.push(
        paymentOf(
          await createPaymentOn(stack, paymentInput(`mix-auto-${i}`, { amount, currency })),
        ),
      );
    }
    await createPaymentOn(
      stack,
      paymentInput('mix-declined', { paymentMethod: 'pm_card_declined' }),
    );
    const manual = paymentOf(
      await createPaymentOn(
        stack,
        paymentInput('mix-manual', { amount: '40.00', captureMethod: 'MANUAL' }),
      ),
    );
    const toCancel = paymentOf(
      await createPaymentOn(stack, paymentInput('mix-cancel', { captureMethod: 'MANUAL' })),
    );
    await gql(CAPTURE, {
      input: { idempotencyKey: 'mix-cap', paymentId: manual.id, amount: '30.00' },
    });
    await gql(CANCEL, { input: { idempotencyKey: 'mix-can', paymentId: toCancel.id } });
    await gql(REFUND, {
      input: { idempotencyKey: 'mix-ref-1', paymentId: auto[0]!.id, amount: '4.00' },
    });
    await gql(REFUND, {
      input: { idempotencyKey: 'mix-ref-2', paymentId: auto[0]!.id, amount: '1.00' },
    });
    await gql(REFUND, {
      input: { idempotencyKey: 'mix-ref-3', paymentId: manual.id, amount: '30.00' },
    });
    await drainOutbox();

    // Every movement once: 4 automatic captures + 1 manual capture + 3 refunds.
    const { rows: postings } = await stack.db.query<{ kind: string; n: number }>(
      `SELECT kind, count(*)::int AS n FROM ledger_postings GROUP BY kind ORDER BY kind`,
    );
    expect(postings).toEqual([
      { kind: 'capture', n: 5 },
      { kind: 'refund', n: 3 },
    ]);

    // Redeliver everything the ledger and receipts got (they read the log: rewinding their
    // cursors hands them every event again): nothing changes.
    await rewindCursors(stack.db);
    expect(await eventsBehindCursors(stack.db)).toBeGreaterThanOrEqual(13);
    await drainOutbox();
    expect(await eventsBehindCursors(stack.db)).toBe(0);
    const { rows: again } = await stack.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger_postings`,
    );
    expect(again[0]?.n).toBe(8);
    const { rows: receipts } = await stack.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM receipts`,
    );
    expect(receipts[0]?.n).toBe(5);

    // The trial balance: per currency, everything that moved, each amount debited once and
    // credited once (a posting is one entry, ADR 0058).
    const trial = await stack.app.services.client.ledger.trialBalance.query({
      tenantId: stack.tenantIds.a,
    });
    const { rows: moved } = await stack.db.query<{ currency: string; minor: string }>(
      `SELECT currency, (sum(amount_captured_minor) + sum(amount_refunded_minor))::text AS minor
         FROM payments WHERE tenant_id = $1 GROUP BY currency HAVING sum(amount_captured_minor) > 0
        ORDER BY currency`,
      [stack.tenantIds.a],
    );
    expect(trial).toEqual(
      moved.map((m) => ({ currency: m.currency, debitsMinor: m.minor, creditsMinor: m.minor })),
    );

    // Balances from the ledger equal captured − refunded from the payments.
    const { rows: expected } = await stack.db.query<{ currency: string; available: string }>(
      `SELECT currency, sum(amount_captured_minor - amount_refunded_minor)::text AS available
         FROM payments WHERE tenant_id = $1 AND amount_captured_minor > 0 GROUP BY currency ORDER BY currency`,
      [stack.tenantIds.a],
    );
    const balances = (await gql(BALANCES)).body.data?.['balances'] as Array<{
      currency: string;
      available: string;
    }>;
    expect(balances.map((b) => b.currency)).toEqual(expected.map((e) => e.currency));
    expect(balances).toEqual([
      { currency: 'EUR', available: '30.50' }, // 10 − 4 − 1 + 25.50 + 30 − 30
      { currency: 'JPY', available: '1200' },
      { currency: 'KWD', available: '3.000' },
    ]);

    // Every event reached the merchant, verified with the Standard Webhooks library.
    const { rows: events } = await stack.db.query<{ id: string }>(
      `SELECT id FROM outbox_events WHERE tenant_id = $1`,
      [stack.tenantIds.a],
    );
    const seen = new Set(receiver.received.map((r) => r.id));
    for (const event of events) expect(seen.has(event.id), event.id).toBe(true);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    expect(new Set(receiver.received.map((r) => r.type))).toEqual(
      new Set([
        'payment.succeeded',
        'payment.failed',
        'payment.authorized',
        'payment.captured',
        'payment.canceled',
        'refund.succeeded',
      ]),
    );
  });
});

describe('webhook redelivery', () => {
  it('after a failure between sending and marking, the same webhook-id arrives again', async () => {
    const payment = paymentOf(await createPaymentOn(stack, paymentInput('redeliver-1')));
    const eventId = `evt_payment_${payment.id}_succeeded`;
    stack.app.faults.arm('outbox.webhook.after-handle', { kind: 'throw' });
    try {
      await expect(drainOutbox()).rejects.toThrow();
    } finally {
      stack.app.faults.disarm('outbox.webhook.after-handle');
    }
    expect(receiver.received.filter((r) => r.id === eventId)).toHaveLength(1);
    // The dispatcher that sent it "died": its claim lease runs out, and the delivery is due again.
    await stack.db.query(
      `UPDATE outbox_deliveries SET next_attempt_at = now(), claimed_until = '-infinity' WHERE event_id = $1`,
      [eventId],
    );
    await drainOutbox();
    const deliveries = receiver.received.filter((r) => r.id === eventId);
    expect(deliveries).toHaveLength(2);
    expect(deliveries.every((d) => d.verified)).toBe(true);
  });

  it('backs off after a failure, and an endpoint answering 410 is disabled', async () => {
    receiver.answerStatus = 500;
    const payment = paymentOf(await createPaymentOn(stack, paymentInput('backoff-1')));
    await drainOutbox();
    const { rows: retried } = await stack.db.query<{
      status: string;
      attempts: number;
      due_later: boolean;
      last_error: string;
    }>(
      `SELECT status, attempts, next_attempt_at > now() AS due_later, last_error FROM outbox_deliveries
        WHERE event_id = $1 AND consumer LIKE 'webhook:%'`,
      [`evt_payment_${payment.id}_succeeded`],
    );
    expect(retried).toEqual([
      { status: 'pending', attempts: 1, due_later: true, last_error: 'http_status: 500' },
    ]);
    receiver.answerStatus = 410;
    // The backoff passes: the delivery's own, and the endpoint circuit's that the failure opened.
    await stack.db.query(
      `UPDATE outbox_deliveries SET next_attempt_at = now(), claimed_until = '-infinity' WHERE status = 'pending'`,
    );
    await stack.db.query(`UPDATE outbox_consumer_circuits SET open_until = now()`);
    await drainOutbox();
    const { rows: endpoints } = await stack.db.query(`SELECT status FROM webhook_endpoints`);
    expect(endpoints).toEqual([{ status: 'disabled' }]);
    const { rows: abandoned } = await stack.db.query<{ status: string }>(
      `SELECT status FROM outbox_deliveries WHERE event_id = $1 AND consumer LIKE 'webhook:%'`,
      [`evt_payment_${payment.id}_succeeded`],
    );
    expect(abandoned).toEqual([{ status: 'abandoned' }]);
    receiver.answerStatus = 200;
  });
});

describe("the ledger's posting ids", () => {
  it('makes duplicate and out-of-order deliveries of a movement one effect', async () => {
    const payment = paymentOf(
      await createPaymentOn(stack, paymentInput('inbox-1', { amount: '9.00' })),
    );
    const ledger = stack.app.services.client.ledger;
    const capture = {
      tenantId: stack.tenantIds.a,
      paymentId: payment.id,
      kind: 'capture' as const,
      currency: 'EUR',
      amountMinor: '900',
      postingId: `ledger_payment_${payment.id}_capture`,
    };
    const refundId = '11111111-2222-4333-8444-555555555555';
    const refund = {
      ...capture,
      kind: 'refund' as const,
      amountMinor: '200',
      postingId: `ledger_refund_${refundId}`,
    };
    // Out of order: the refund's message first, then the capture's twice, then the refund's again.
    const results = [];
    results.push(await ledger.post.mutate({ ...refund, messageId: 'msg-refund' }));
    results.push(await ledger.post.mutate({ ...capture, messageId: 'msg-capture' }));
    results.push(await ledger.post.mutate({ ...capture, messageId: 'msg-capture' }));
    results.push(await ledger.post.mutate({ ...refund, messageId: 'msg-refund' }));
    // Another message for a movement already posted (the outbox's own event, say): still one.
    results.push(await ledger.post.mutate({ ...capture, messageId: 'msg-capture-other' }));
    expect(results.map((r) => r.posted)).toEqual([true, true, false, false, false]);
    const { rows } = await stack.db.query<{ id: string }>(
      `SELECT id FROM ledger_postings WHERE payment_id = $1 ORDER BY id`,
      [payment.id],
    );
    // The outbox has not been drained in this test: these two postings are the only ones.
    expect(rows.map((r) => r.id).sort()).toEqual([capture.postingId, refund.postingId].sort());
  });
});

describe('the books', () => {
  // A posting is one debit and one credit of one amount (ADR 0058): balanced by construction.
  // What could still be wrong in a row is refused by the table, whatever the code does.
  it.each([
    {
      entry: 'no amount',
      debit: 'psp_clearing',
      credit: 'merchant_balance',
      amount: null,
      code: '23502',
    },
    {
      entry: 'a zero amount',
      debit: 'psp_clearing',
      credit: 'merchant_balance',
      amount: '0',
      code: '23514',
    },
    {
      entry: 'a negative amount',
      debit: 'psp_clearing',
      credit: 'merchant_balance',
      amount: '-100',
      code: '23514',
    },
    {
      entry: 'one account on both sides',
      debit: 'merchant_balance',
      credit: 'merchant_balance',
      amount: '100',
      code: '23514',
    },
    {
      entry: 'no debited account',
      debit: null,
      credit: 'merchant_balance',
      amount: '100',
      code: '23502',
    },
    {
      entry: 'no credited account',
      debit: 'psp_clearing',
      credit: null,
      amount: '100',
      code: '23502',
    },
  ])('refuse a posting with $entry', async ({ entry, debit, credit, amount, code }) => {
    const payment = paymentOf(
      await createPaymentOn(stack, paymentInput(`bad-entry-${entry.replaceAll(' ', '-')}`)),
    );
    await expect(
      stack.db.query(
        `INSERT INTO ledger_postings
                (tenant_id, id, payment_id, kind, currency, debit_account, credit_account, amount_minor)
         VALUES ($1, $2, $3, 'capture', 'EUR', $4, $5, $6)`,
        [stack.tenantIds.a, `ledger_test_${payment.id}`, payment.id, debit, credit, amount],
      ),
    ).rejects.toMatchObject({ code });
  });
});

describe('several dispatchers on one backlog', () => {
  it('deliver every event; the ledger still posts each movement once', async () => {
    for (let i = 0; i < 12; i++) await createPaymentOn(stack, paymentInput(`many-dispatch-${i}`));
    const { deps, caller } = stack.app.services;
    const dispatchers = Array.from(
      { length: 3 },
      () =>
        new OutboxDispatcher({
          pool: deps.pool,
          faults: deps.faults,
          metrics: deps.metrics,
          ...outboxConsumers(deps, caller),
          serviceOf: (kind) => (kind === 'ledger' ? 'ledger' : 'notifications'),
          intervalMs: 60_000,
          onError: () => undefined,
        }),
    );
    await drainEveryConsumer(stack.db, dispatchers);
    const { rows: pending } = await stack.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_deliveries WHERE status = 'pending'`,
    );
    expect(pending[0]?.n).toBe(0);
    expect(await eventsBehindCursors(stack.db)).toBe(0);
    const { rows } = await stack.db.query<{ payment_id: string; n: number }>(
      `SELECT p.id AS payment_id, count(l.id)::int AS n FROM payments p
         LEFT JOIN ledger_postings l ON l.payment_id = p.id AND l.kind = 'capture'
        WHERE p.reference LIKE 'many-dispatch-%' GROUP BY p.id`,
    );
    expect(rows).toHaveLength(12);
    expect(rows.every((r) => r.n === 1)).toBe(true);
  });
});
