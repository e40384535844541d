import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CLAIM_LEASE_MS,
  LOG_CLAIM_LEASE_MS,
} from '../../lib/outbox/dispatcher.ts';
import { ADVANCE_LOG_CURSOR, CLAIM_LOG_BATCH } from '../../lib/outbox/event-log.sql.ts';
import { writeEvent } from '../../lib/outbox/outbox.ts';
import {
  cursorHasPassed,
  drainOutbox,
  eventsBehindCursors,
  untilLogIsReadable,
} from '../support/event-log.ts';
import { useTestStack } from '../support/test-stack.ts';

/**
 * The ledger and receipts read the outbox's event log through a cursor each (migrations/0016).
 * What a cursor must never do: pass an event that is not yet visible (a transaction that took
 * its id before a later one's and committed after it), or be moved by a dispatcher whose claim
 * another has taken over.
 */
const stack = useTestStack('outbox-event-log');

/** A capture the ledger posts, for a payment id of its own. */
function captureEvent(name: string) {
  const paymentId = randomUUID();
  return {
    paymentId,
    event: {
      tenantId: stack.tenantIds.a,
      id: `evt_payment_${paymentId}_succeeded`,
      type: 'payment.succeeded',
      payload: {
        payment: { id: paymentId, reference: name },
        movement: {
          kind: 'capture',
          postingId: `ledger_payment_${paymentId}_capture`,
          amountMinor: '100',
          currency: 'EUR',
        },
      },
      consumers: ['ledger'],
    },
  };
}

async function drain(): Promise<void> {
  await drainOutbox(stack.db, [stack.app.services.dispatcher]);
}

async function postedFor(paymentId: string): Promise<number> {
  const { rows } = await stack.db.query(`SELECT 1 FROM ledger_postings WHERE payment_id = $1`, [
    paymentId,
  ]);
  return rows.length;
}

describe('a log cursor', () => {
  it('waits for a transaction that wrote an event earlier and commits later', async () => {
    await drain();
    const early = captureEvent('early');
    const late = captureEvent('late');
    const open = await stack.db.connect();
    try {
      await open.query('BEGIN');
      await writeEvent(open, early.event); // takes its transaction id first
      await writeEvent(stack.db, late.event); // a later id, committed first
      await stack.app.services.dispatcher.dispatchOnce();
      // Past `late` now, the cursor would never come back for `early`.
      expect(await cursorHasPassed(stack.db, 'ledger', late.event.id)).toBe(false);
      await open.query('COMMIT');
    } catch (error) {
      await open.query('ROLLBACK');
      throw error;
    } finally {
      open.release();
    }
    await drain();
    expect(await cursorHasPassed(stack.db, 'ledger', early.event.id)).toBe(true);
    expect(await cursorHasPassed(stack.db, 'ledger', late.event.id)).toBe(true);
    expect(await postedFor(early.paymentId)).toBe(1);
    expect(await postedFor(late.paymentId)).toBe(1);
  });

  it('walks past the events that do not name its consumer', async () => {
    await drain();
    // Three refunds: the ledger's alone. Receipts' cursor must not stop before them, or every
    // poll would read them again until receipts' next event.
    const refunds = [captureEvent('r1'), captureEvent('r2'), captureEvent('r3')];
    for (const refund of refunds) await writeEvent(stack.db, refund.event);
    await drain();
    const { rows } = await stack.db.query<{ passed: boolean }>(
      `SELECT (e.written_by, e.log_seq) <= (c.written_by, c.log_seq) AS passed
         FROM outbox_events e, outbox_cursors c
        WHERE c.consumer = 'receipts' AND e.id = ANY ($1::text[])`,
      [refunds.map((r) => r.event.id)],
    );
    expect(rows.map((r) => r.passed)).toEqual([true, true, true]);
    for (const refund of refunds) expect(await postedFor(refund.paymentId)).toBe(1);
  });

  it('writes nothing when nothing is due: an idle poll is a read', async () => {
    await drain();
    // The drain's last polls found nothing: they left the cursor unclaimed, not leased.
    const { rows: cursor } = await stack.db.query<{ free: boolean }>(
      `SELECT claimed_until <= now() AS free FROM outbox_cursors WHERE consumer = 'ledger'`,
    );
    expect(cursor).toEqual([{ free: true }]);
    const client = await stack.db.connect();
    try {
      await client.query('BEGIN');
      const claimed = await client.query(CLAIM_LOG_BATCH, ['ledger', 60_000, 64]);
      const { rows } = await client.query<{ xid: string | null }>(
        'SELECT pg_current_xact_id_if_assigned()::text AS xid',
      );
      await client.query('ROLLBACK');
      expect(claimed.rows).toEqual([]);
      // A statement that wrote or locked a row would have taken a transaction id.
      expect(rows[0]?.xid).toBeNull();
    } finally {
      client.release();
    }
  });

  it('is held at most LOG_CLAIM_LEASE_MS by a dispatcher that dies before moving it', async () => {
    await drain();
    await writeEvent(stack.db, captureEvent('dies-holding').event);
    await untilLogIsReadable(stack.db);
    // Fails after the posting, before the advance: the claim stays as a dead process leaves it.
    stack.app.faults.arm('outbox.ledger.after-handle', { kind: 'throw' });
    try {
      await expect(stack.app.services.dispatcher.dispatchOnce()).rejects.toThrow();
    } finally {
      stack.app.faults.disarm('outbox.ledger.after-handle');
    }
    try {
      const { rows } = await stack.db.query<{ held_ms: number }>(
        `SELECT EXTRACT(EPOCH FROM claimed_until - now())::float8 * 1000 AS held_ms
           FROM outbox_cursors WHERE consumer = 'ledger'`,
      );
      // The claim lease for delivery rows is longer: one dead process would stall the ledger.
      expect(DEFAULT_CLAIM_LEASE_MS).toBeGreaterThan(LOG_CLAIM_LEASE_MS);
      expect(rows[0]?.held_ms).toBeGreaterThan(0);
      expect(rows[0]?.held_ms).toBeLessThanOrEqual(LOG_CLAIM_LEASE_MS);
    } finally {
      // As if the lease had run out, for the tests after this one.
      await stack.db.query(`UPDATE outbox_cursors SET claimed_until = '-infinity'`);
      await drain();
    }
  });

  it('is not moved by a dispatcher whose claim another has taken over', async () => {
    await drain();
    await writeEvent(stack.db, captureEvent('taken-over').event);
    await untilLogIsReadable(stack.db);
    type Claimed = { claim: string; written_by: string; log_seq: string };
    // A lease of zero: the first claim is over as soon as it is made, as a dead dispatcher's is.
    const first = await stack.db.query<Claimed>(CLAIM_LOG_BATCH, ['ledger', 0, 64]);
    const second = await stack.db.query<Claimed>(CLAIM_LOG_BATCH, ['ledger', 60_000, 64]);
    expect(first.rows).toHaveLength(1);
    expect(second.rows).toHaveLength(1);
    const advance = (claim: string, position: Claimed) =>
      stack.db.query(ADVANCE_LOG_CURSOR, [
        'ledger',
        claim,
        position.written_by,
        position.log_seq,
        [],
        [],
        [],
        [],
        0,
      ]);
    // The stale dispatcher, moving the cursor back to where it started: refused.
    const stale = await advance(first.rows[0]!.claim, { ...first.rows[0]!, log_seq: '0' });
    expect(stale.rowCount).toBe(0);
    expect((await advance(second.rows[0]!.claim, second.rows[0]!)).rowCount).toBe(1);
    expect(await eventsBehindCursors(stack.db)).toBe(0);
  });
});
