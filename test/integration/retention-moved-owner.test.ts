import { describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../lib/errors.ts';
import { maintainPartitions } from '../../lib/idempotency/retention.ts';
import {
  createPaymentOwnerOf,
  type PaymentKeyRow,
  describePaymentAs,
} from '../support/payment-owners.ts';
import { dailyPartitionsSince, generationsOf } from '../support/test-partitions.ts';
import { createPaymentOn, paymentInput, useTestStack } from '../support/test-stack.ts';

const POLICY = { ttlSeconds: 3, metadataRetentionSeconds: 7 * 86_400, partitionSeconds: 86_400 };
const stack = useTestStack('retention-moved-owner', { app: { leaseMs: 30_000 } });

/**
 * Retention moves an unfinished request out of a partition it is about to drop only once nobody
 * holds its lease (ADR 0052). An owner whose lease ran out may still be running, though: a GC
 * pause, a stalled provider call. Its statements name its row by id and expiry, and the move
 * changed the expiry; so it must be refused as fenced out, writing nothing, and never write to
 * a row it no longer names. The request itself is left for whoever takes it over next.
 */
describe('an owner whose row retention moved while its lease had run out', () => {
  it('is fenced out, writes nothing, and the request still completes once', async () => {
    await dailyPartitionsSince(stack.db, 30);
    stack.app.faults.arm('createPayment.provider_charge.before-call', { kind: 'throw' });
    await createPaymentOn(stack, paymentInput('ret-moved-owner'));
    stack.app.faults.disarm('createPayment.provider_charge.before-call');
    // Aged past metadata retention with its phase log (none: it never advanced, ADR 0056), and
    // its owner's lease over.
    const { rows: aged } = await stack.db.query<PaymentKeyRow>(
      `WITH k AS (UPDATE idempotency_keys SET expires_at = now() - interval '20 days',
                                              lease_expires_at = now() - interval '1 second'
                   WHERE key = 'ret-moved-owner'
                   RETURNING id, fencing_token, recovery_point, resource_id, expires_at),
            l AS (UPDATE idempotency_phase_log l SET expires_at = k.expires_at
                    FROM k WHERE l.request_id = k.id)
       SELECT * FROM k`,
    );
    const row = aged[0]!;
    const movedOwner = () => createPaymentOwnerOf(stack, 'ret-moved-owner', row);
    const describeAs = (text: string) => describePaymentAs(row.resource_id, text);

    const run = await maintainPartitions(stack.app.services.deps.pool, POLICY);
    expect(run.movedUnfinished).toBe(1);
    const [moved] = await generationsOf(stack.db, 'ret-moved-owner');
    expect(moved).toMatchObject({ id: row.id, state: 'started' });
    expect(moved!.expires_at.getTime()).toBeGreaterThan(Date.now());

    // The owner from before the move: same id, same token, the old expiry.
    await expect(
      movedOwner().advance('provider_charged', describeAs('written by the moved owner')),
    ).rejects.toBeInstanceOf(LeaseLostError);
    const { rows: payment } = await stack.db.query<{ description: string | null }>(
      'SELECT description FROM payments WHERE id = $1',
      [row.resource_id],
    );
    expect(payment).toEqual([{ description: null }]);
    expect(await generationsOf(stack.db, 'ret-moved-owner')).toEqual([moved]);

    // The request is still the same request: the recovery worker takes it over and finishes it.
    await stack.db.query(
      `UPDATE idempotency_keys SET next_attempt_at = NULL WHERE key = 'ret-moved-owner'`,
    );
    await stack.app.services.worker.sweepOnce();
    const [finished] = await generationsOf(stack.db, 'ret-moved-owner');
    expect(finished).toMatchObject({ id: row.id, state: 'finished', outcome: 'SUCCEEDED' });
    expect(stack.sandbox.charges({ reference: 'ret-moved-owner' })).toHaveLength(1);
  });
});
