import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { writeEvent } from '../../lib/outbox/outbox.ts';
import { cursorHasPassed, untilLogIsReadable } from '../support/event-log.ts';
import { paymentOf } from '../support/graphql-client.ts';
import { createPaymentOn, paymentInput, useTestStack } from '../support/test-stack.ts';

/**
 * The ledger and receipts consume the outbox a batch at a time (a claim of their log cursor):
 * one transaction and one multi-row statement per batch instead of one per event. What batching
 * must not cost: a movement still posts once however it is delivered, and one event that cannot
 * be taken does not hold back the rest of its batch.
 */
const stack = useTestStack('outbox-batches');

async function payments(prefix: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push(paymentOf(await createPaymentOn(stack, paymentInput(`${prefix}-${i}`))).id);
  return ids;
}

/** The transactions that wrote `table`'s rows for these payments. */
async function writersOf(table: 'ledger_postings' | 'receipts', paymentIds: string[]) {
  const { rows } = await stack.db.query<{ xmin: string }>(
    `SELECT DISTINCT xmin::text AS xmin FROM ${table} WHERE payment_id = ANY ($1::uuid[])`,
    [paymentIds],
  );
  return rows.map((r) => r.xmin);
}

async function deliveryOf(eventId: string, consumer: string) {
  const { rows } = await stack.db.query<{
    status: string;
    attempts: number;
    last_error: string | null;
  }>(
    `SELECT status, attempts, last_error FROM outbox_deliveries WHERE event_id = $1 AND consumer = $2`,
    [eventId, consumer],
  );
  return rows[0];
}

describe('a claim of ledger and receipt deliveries', () => {
  it('is written by one transaction per consumer, and the ledger keeps no inbox rows', async () => {
    const ids = await payments('batch', 10);
    await untilLogIsReadable(stack.db);
    const handled = await stack.app.services.dispatcher.dispatchOnce();
    expect(handled).toBeGreaterThanOrEqual(20);
    const ledgerWriters = await writersOf('ledger_postings', ids);
    expect(ledgerWriters).toHaveLength(1);
    expect(await writersOf('receipts', ids)).toHaveLength(1);
    const { rows: postings } = await stack.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger_postings WHERE payment_id = ANY ($1::uuid[])`,
      [ids],
    );
    expect(postings).toEqual([{ n: 10 }]);
    // The posting ids are the ledger's memory of what it has posted (ADR 0049).
    const { rows: inbox } = await stack.db.query(
      `SELECT 1 FROM inbox_messages WHERE message_id = ANY ($1::text[])`,
      [ids.map((id) => `evt_payment_${id}_succeeded`)],
    );
    expect(inbox).toEqual([]);
  });

  it('delivers the rest when one of its deliveries cannot be made, and retries that one', async () => {
    const ids = await payments('poison', 3);
    const poisonPayment = randomUUID();
    const poison = `evt_payment_${poisonPayment}_succeeded`;
    // A movement the ledger refuses (an amount of zero): the whole claim's call fails with it.
    await writeEvent(stack.db, {
      tenantId: stack.tenantIds.a,
      id: poison,
      type: 'payment.succeeded',
      payload: {
        payment: { id: poisonPayment },
        movement: {
          kind: 'capture',
          postingId: `ledger_payment_${poisonPayment}_capture`,
          amountMinor: '0',
          currency: 'EUR',
        },
      },
      consumers: ['ledger'],
    });
    await untilLogIsReadable(stack.db);
    await stack.app.services.dispatcher.dispatchOnce();
    // The ledger reads the log: the claim is past every event, the refused one queued as a
    // delivery row to be retried on its own, the others posted with no row at all.
    for (const id of ids) {
      const eventId = `evt_payment_${id}_succeeded`;
      expect(await cursorHasPassed(stack.db, 'ledger', eventId)).toBe(true);
      expect(await deliveryOf(eventId, 'ledger')).toBeUndefined();
    }
    const { rows: posted } = await stack.db.query(
      `SELECT 1 FROM ledger_postings WHERE payment_id = ANY ($1::uuid[])`,
      [ids],
    );
    expect(posted).toHaveLength(ids.length);
    expect(await cursorHasPassed(stack.db, 'ledger', poison)).toBe(true);
    const refused = await deliveryOf(poison, 'ledger');
    expect(refused).toMatchObject({ status: 'pending', attempts: 1 });
    expect(refused?.last_error).toBeTruthy();
    const { rows } = await stack.db.query(`SELECT 1 FROM ledger_postings WHERE payment_id = $1`, [
      poisonPayment,
    ]);
    expect(rows).toHaveLength(0);
  });
});

describe('postMany', () => {
  it('posts a movement once when one call carries it twice, by one message or by two', async () => {
    const [paymentId] = await payments('twice', 1);
    const capture = {
      tenantId: stack.tenantIds.a,
      paymentId: paymentId!,
      kind: 'capture' as const,
      currency: 'EUR',
      amountMinor: '1000',
      postingId: `ledger_payment_${paymentId}_capture`,
    };
    const { posted } = await stack.app.services.client.ledger.postMany.mutate([
      { ...capture, messageId: 'twice-a' },
      { ...capture, messageId: 'twice-a' },
      { ...capture, messageId: 'twice-b' },
    ]);
    expect(posted).toEqual([{ postingId: capture.postingId, kind: 'capture' }]);
    const { rows } = await stack.db.query(
      `SELECT debit_account, credit_account, amount_minor::text AS amount_minor
         FROM ledger_postings WHERE id = $1`,
      [capture.postingId],
    );
    expect(rows).toEqual([
      { debit_account: 'psp_clearing', credit_account: 'merchant_balance', amount_minor: '1000' },
    ]);
  });

  it('posts a movement from a caller that sends no message id', async () => {
    const [paymentId] = await payments('no-message', 1);
    const postingId = `ledger_payment_${paymentId}_capture`;
    const { posted } = await stack.app.services.client.ledger.postMany.mutate([
      {
        tenantId: stack.tenantIds.a,
        paymentId: paymentId!,
        kind: 'capture',
        currency: 'EUR',
        amountMinor: '500',
        postingId,
      },
    ]);
    expect(posted).toEqual([{ postingId, kind: 'capture' }]);
  });
});
