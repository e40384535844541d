import { describe, expect, it } from 'vitest';
import { committedPhases } from '../support/committed-phases.ts';
import { createPaymentOwnerOf, type PaymentKeyRow } from '../support/payment-owners.ts';
import { countRows, createPaymentOn, paymentInput, useTestStack } from '../support/test-stack.ts';

const stack = useTestStack('admission-phase-log', { app: { leaseMs: 30_000 } });

async function phaseLogOf(key: string) {
  const { rows } = await stack.db.query<{
    recovery_point: string;
    fencing_token: string;
    logged_at_admission: boolean;
  }>(
    `SELECT l.recovery_point, l.fencing_token::text, l.committed_at = k.created_at AS logged_at_admission
       FROM idempotency_phase_log l JOIN idempotency_keys k ON k.id = l.request_id
      WHERE k.key = $1 ORDER BY l.committed_at`,
    [key],
  );
  return rows;
}

/**
 * Admission writes no phase-log row (ADR 0056): the key row records the admission, at its first
 * recovery point, under token 1, at its created_at, until the request first advances, and that
 * advance logs the admission before itself. A payment admitted and finished at once, every
 * payment today, writes no phase-log row at all, and its history is still whole.
 */
describe('the admission phase', () => {
  it('writes no phase-log row for a payment admitted and finished, whose history stays whole', async () => {
    const answer = await createPaymentOn(stack, paymentInput('adm-finished'));
    expect(answer.body.errors).toBeUndefined();
    expect(await countRows(stack.db, 'idempotency_phase_log')).toBe(0);
    expect(await committedPhases(stack.db, 'adm-finished')).toEqual([
      { recovery_point: 'provider_charge_sent', fencing_token: '1' },
      { recovery_point: 'finished', fencing_token: '1' },
    ]);
  });

  it('is logged by the first advance, as it was, before the advance itself', async () => {
    stack.app.faults.arm('createPayment.provider_charge.before-call', { kind: 'throw' });
    await createPaymentOn(stack, paymentInput('adm-advanced'));
    stack.app.faults.disarm('createPayment.provider_charge.before-call');
    expect(await phaseLogOf('adm-advanced')).toEqual([]);
    const { rows } = await stack.db.query<PaymentKeyRow>(
      `UPDATE idempotency_keys SET fencing_token = 2 WHERE key = 'adm-advanced'
       RETURNING id, fencing_token::text, recovery_point, resource_id, expires_at`,
    );
    // Taken over under token 2, then advanced: the admission was still token 1's.
    await createPaymentOwnerOf(stack, 'adm-advanced', rows[0]!).advance('provider_charged', () =>
      Promise.resolve(),
    );
    expect(await phaseLogOf('adm-advanced')).toEqual([
      { recovery_point: 'provider_charge_sent', fencing_token: '1', logged_at_admission: true },
      { recovery_point: 'provider_charged', fencing_token: '2', logged_at_admission: false },
    ]);
  });
});
