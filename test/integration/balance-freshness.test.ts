import { describe, expect, it } from 'vitest';
import {
  cursorHasPassed,
  drainOutbox as drainEveryConsumer,
  rewindCursors,
  untilLogIsReadable,
} from '../support/event-log.ts';
import { graphql, type GraphQLAnswer } from '../support/graphql-client.ts';
import { paymentInput, TENANT_A, useTestStack } from '../support/test-stack.ts';

/**
 * Balances say how fresh they are (ADR 0041). The ledger posts from the event log a moment
 * after a capture or refund commits; the test stack runs no dispatcher of its own, so each test
 * decides when the ledger catches up (drainOutbox), and reads the balance before and after.
 * Each test moves money in a currency of its own.
 */
const stack = useTestStack('balance-freshness');

const PAYMENT = 'id status updatedAt';
const CREATE = `mutation C($input: CreatePaymentInput!) {
  createPayment(input: $input) { payment { ${PAYMENT} } } }`;
const CAPTURE = `mutation Cap($input: CapturePaymentInput!) {
  capturePayment(input: $input) { payment { ${PAYMENT} } } }`;
const REFUND = `mutation R($input: RefundPaymentInput!) {
  refundPayment(input: $input) { payment { ${PAYMENT} } } }`;
const BALANCES = '{ balances { currency available pending asOf } }';

interface Payment {
  id: string;
  status: string;
  updatedAt: string;
}
interface Balance {
  currency: string;
  available: string;
  pending: string;
  asOf: string;
}

function data(answer: GraphQLAnswer, field: string): Record<string, unknown> {
  const value = answer.body.data?.[field];
  if (value === undefined || value === null) {
    throw new Error(`no ${field}: ${JSON.stringify(answer.body)}\n${stack.errors.join('\n')}`);
  }
  return value as Record<string, unknown>;
}

async function send(query: string, field: string, input: Record<string, unknown>) {
  const answer = await graphql(stack.app.url, {
    apiKey: TENANT_A.apiKey,
    query,
    variables: { input },
  });
  return data(answer, field)['payment'] as Payment;
}

async function balance(currency: string): Promise<Balance | undefined> {
  const answer = await graphql(stack.app.url, { apiKey: TENANT_A.apiKey, query: BALANCES });
  const balances = answer.body.data?.['balances'] as Balance[] | undefined;
  if (balances === undefined) throw new Error(`no balances: ${JSON.stringify(answer.body)}`);
  return balances.find((b) => b.currency === currency);
}

const drainOutbox = () => drainEveryConsumer(stack.db, [stack.app.services.dispatcher]);

/** The balance does not yet hold `change`, and says so: asOf is before it. */
function expectBefore(b: Balance | undefined, change: Payment): void {
  expect(Date.parse(b!.asOf)).toBeLessThan(Date.parse(change.updatedAt));
}
/** The balance holds `change`, and says so: asOf has reached it. */
function expectIncludes(b: Balance | undefined, change: Payment): void {
  expect(Date.parse(b!.asOf)).toBeGreaterThanOrEqual(Date.parse(change.updatedAt));
}

describe('a balance read right after a capture', () => {
  it('has it pending and asOf before it; once the ledger has posted it, available and asOf', async () => {
    const paid = await send(
      CREATE,
      'createPayment',
      paymentInput('fresh-auto', { amount: '10.00', currency: 'EUR' }),
    );
    expect(paid.status).toBe('SUCCEEDED');
    const before = await balance('EUR');
    expect(before).toMatchObject({ available: '0.00', pending: '10.00' });
    expectBefore(before, paid);

    await drainOutbox();
    const after = await balance('EUR');
    expect(after).toMatchObject({ available: '10.00', pending: '0.00' });
    expectIncludes(after, paid);
  });

  it('counts a refund against a capture the ledger has not posted yet', async () => {
    const authorised = await send(
      CREATE,
      'createPayment',
      paymentInput('fresh-manual', { amount: '20.00', currency: 'USD', captureMethod: 'MANUAL' }),
    );
    await drainOutbox();
    expect(await balance('USD')).toBeUndefined(); // an authorisation moves no money

    const captured = await send(CAPTURE, 'capturePayment', {
      idempotencyKey: 'fresh-manual-cap',
      paymentId: authorised.id,
    });
    const afterCapture = await balance('USD');
    expect(afterCapture).toMatchObject({ available: '0.00', pending: '20.00' });
    expectBefore(afterCapture, captured);

    const refunded = await send(REFUND, 'refundPayment', {
      idempotencyKey: 'fresh-manual-ref',
      paymentId: authorised.id,
      amount: '5.00',
    });
    expect(await balance('USD')).toMatchObject({ available: '0.00', pending: '15.00' });

    await drainOutbox();
    const after = await balance('USD');
    expect(after).toMatchObject({ available: '15.00', pending: '0.00' });
    expectIncludes(after, refunded);
  });
});

describe('what the ledger has taken', () => {
  it('is not counted again while its cursor has yet to move past it', async () => {
    const paid = await send(
      CREATE,
      'createPayment',
      paymentInput('fresh-taken', { amount: '7.00', currency: 'CHF' }),
    );
    await drainOutbox();
    // As after a crash between the posting and the cursor's advance: every event is after the
    // cursor again, and every posting exists.
    await rewindCursors(stack.db);
    const b = await balance('CHF');
    expect(b).toMatchObject({ available: '7.00', pending: '0.00' });
    expectIncludes(b, paid);
    await drainOutbox();
  });

  it('a take that failed and waits for its retry is pending, as the ledger has not posted it', async () => {
    // The ledger's postings refused for a while: its batch fails, and the dispatcher queues the
    // event as a ledger delivery row, pending, behind its cursor.
    await stack.db.query(
      `ALTER TABLE ledger_postings ADD CONSTRAINT refuse_for_a_while CHECK (false) NOT VALID`,
    );
    let paid: Payment;
    try {
      paid = await send(
        CREATE,
        'createPayment',
        paymentInput('fresh-failed', { amount: '3.00', currency: 'GBP' }),
      );
      await untilLogIsReadable(stack.db);
      await stack.app.services.dispatcher.dispatchOnce();
    } finally {
      await stack.db.query(`ALTER TABLE ledger_postings DROP CONSTRAINT refuse_for_a_while`);
    }
    const eventId = `evt_payment_${paid.id}_succeeded`;
    expect(await cursorHasPassed(stack.db, 'ledger', eventId)).toBe(true);
    const { rows } = await stack.db.query(
      `SELECT status FROM outbox_deliveries WHERE event_id = $1 AND consumer = 'ledger'`,
      [eventId],
    );
    expect(rows).toEqual([{ status: 'pending' }]);
    const waiting = await balance('GBP');
    expect(waiting).toMatchObject({ available: '0.00', pending: '3.00' });
    expectBefore(waiting, paid);

    await stack.db.query(
      `UPDATE outbox_deliveries SET next_attempt_at = now() WHERE event_id = $1`,
      [eventId],
    );
    await drainOutbox();
    const after = await balance('GBP');
    expect(after).toMatchObject({ available: '3.00', pending: '0.00' });
    expectIncludes(after, paid);
  });
});
