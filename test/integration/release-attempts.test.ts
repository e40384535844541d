import { describe, expect, it } from 'vitest';
import { defineOperation } from '../../lib/idempotency/operation.ts';
import type { Admission } from '../../lib/idempotency/engine.ts';
import { claimForSettlement } from '../../lib/idempotency/settlement.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { useTestStackOn } from '../support/test-stack.ts';

/**
 * What a released attempt counts toward unknown (RELEASE_KEY). A request becomes unknown after
 * PROVIDER_UNKNOWN_AFTER_ATTEMPTS attempts ending in a timeout; an attempt that sent nothing
 * left unanswered (`unasked`: its time went on keeping the lease) is handed on and counts for
 * nothing, so a database failing over cannot spend a request's attempts without the provider.
 */
const OPERATION = defineOperation({
  id: 'tests.release-attempts.v1',
  publicName: 'releaseAttempts',
  service: 'payments',
  answerVersion: 1,
  outcomeOf: () => 'done',
});

const database = useTestDatabase('release-attempts');
const stack = useTestStackOn(database, { app: { unknownAfterAttempts: 2 } });

async function owned(key: string): Promise<Extract<Admission, { kind: 'owned' }>> {
  const admission = await stack.app.services.deps.engine.admit({
    scope: { tenantId: stack.tenantIds.a, operation: OPERATION, key },
    command: 'same',
    first: { to: 'sealing', resourceId: '00000000-0000-4000-8000-00000000b001', statements: [] },
  });
  if (admission.kind !== 'owned') throw new Error(`admission: ${admission.kind}`);
  return admission;
}

async function rowOf(key: string) {
  const { rows } = await stack.db.query<{
    attempts: number;
    state: string;
    last_attempt_outcome: string | null;
  }>(`SELECT attempts, state, last_attempt_outcome FROM idempotency_keys WHERE key = $1`, [key]);
  return rows[0];
}

describe('a released attempt', () => {
  it('hands an unasked attempt on without counting it toward unknown', async () => {
    const first = await owned('unasked');
    expect(await first.request.release('unasked')).toBe('started');
    // Nothing recorded as an attempt: not its count, not its outcome.
    expect(await rowOf('unasked')).toEqual({
      attempts: 0,
      state: 'started',
      last_attempt_outcome: null,
    });
    // Taken over at once (its lease ended), and unasked again: still nothing counted.
    expect(await (await owned('unasked')).request.release('unasked')).toBe('started');
    // Two timeouts are what make it unknown here, whatever came unasked before them.
    expect(await (await owned('unasked')).request.release('timeout')).toBe('started');
    expect(await (await owned('unasked')).request.release('timeout')).toBe('unknown');
    expect(await rowOf('unasked')).toMatchObject({ attempts: 2, state: 'unknown' });
  });

  it('puts a request claimed from unknown back to unknown when its attempt asked nothing', async () => {
    await (await owned('claimed')).request.release('timeout');
    expect(await (await owned('claimed')).request.release('timeout')).toBe('unknown');
    // Reconciliation, or an operator's re-drive, claims it and resumes; the attempt asks nothing.
    const { rows } = await stack.db.query<{ fencing_token: string }>(
      `SELECT fencing_token FROM idempotency_keys WHERE key = 'claimed'`,
    );
    const claimed = await claimForSettlement(stack.app.services.deps.engine.deps, {
      scope: { tenantId: stack.tenantIds.a, operation: OPERATION, key: 'claimed' },
      seenToken: rows[0]!.fencing_token,
    });
    expect(await claimed!.release('unasked')).toBe('unknown');
    // Still unknown: a retry is told to wait for reconciliation, and calls nothing.
    expect(await rowOf('claimed')).toEqual({
      attempts: 2,
      state: 'unknown',
      last_attempt_outcome: 'timeout',
    });
  });
});
