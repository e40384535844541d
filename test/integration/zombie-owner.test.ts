import { describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../lib/errors.ts';
import { committedPhases } from '../support/committed-phases.ts';
import { errorCodeOf, paymentOf } from '../support/graphql-client.ts';
import { createPaymentOwnerOf, describePaymentAs } from '../support/payment-owners.ts';
import { createPaymentOn, paymentInput, useTestStack } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';

const LEASE_MS = 1_000;
const stack = useTestStack('zombie', { app: { leaseMs: LEASE_MS } });

/**
 * Sets the lease of `key`'s owner by the database's clock (`when`, SQL), not by how fast this
 * machine is: a stalled owner (at a hook before its provider call) beats no more, so nothing
 * moves it meanwhile. Live, a duplicate is refused; run out, the next one takes over.
 */
async function leaseEndsAt(key: string, when: string): Promise<void> {
  await stack.db.query(`UPDATE idempotency_keys SET lease_expires_at = ${when} WHERE key = $1`, [
    key,
  ]);
}
const LIVE = "now() + interval '1 hour'";
const RUN_OUT = "now() - interval '1 second'";

/** What a takeover leaves: the zombie's phase under token 1, the taker-over's finish under 2. */
const TAKEN_OVER_PHASES = [
  { recovery_point: 'provider_charge_sent', fencing_token: '1' },
  { recovery_point: 'finished', fencing_token: '2' },
];

/** The key's committed phases, oldest first, each with the fencing token it committed under. */
const phasesWithTokens = (key: string) => committedPhases(stack.db, key);

/** Waits for an owner to reach a fault point's hook: milliseconds, so polled closely. */
const untilHookRan = (ran: () => boolean, what: string) =>
  waitUntil(ran, { timeoutMs: 10_000, intervalMs: 10, what });

/**
 * Arms `point` so that the first owner to reach it stalls there until released (a GC pause, a
 * SIGSTOP) while later ones pass; counts every owner that reaches it.
 */
function stallFirstOwnerAt(point: string): { reached: () => number; release: () => void } {
  let release!: () => void;
  const stalled = new Promise<void>((resolve) => (release = resolve));
  let reached = 0;
  stack.app.faults.arm(point, {
    kind: 'call',
    run: async () => {
      reached += 1;
      if (reached === 1) await stalled;
    },
  });
  return { reached: () => reached, release: () => release() };
}

describe('a zombie owner that wakes after its lease was taken over', () => {
  it('cannot write: its final phase is refused, the taker-over’s result stands, one charge', async () => {
    const zombie = stallFirstOwnerAt('createPayment.provider_charge.before-call');
    const input = paymentInput('zombie-1', { amount: '5.00', reference: 'zombie-ref' });
    const send = () => createPaymentOn(stack, input);

    const zombieSent = send();
    await untilHookRan(() => zombie.reached() > 0, 'the zombie to reach the provider call');
    await leaseEndsAt('zombie-1', LIVE);
    const early = await send();
    expect(errorCodeOf(early)).toBe('IDEMPOTENCY_KEY_IN_USE'); // lease still live: no takeover

    await leaseEndsAt('zombie-1', RUN_OUT);
    const takeover = await send();
    expect(paymentOf(takeover).status).toBe('SUCCEEDED');

    zombie.release();
    const zombieAnswer = await zombieSent;
    expect(errorCodeOf(zombieAnswer)).toBe('IDEMPOTENCY_KEY_IN_USE');

    const { rows: keys } = await stack.db.query<{ state: string; fencing_token: string }>(
      `SELECT state, fencing_token FROM idempotency_keys WHERE key = 'zombie-1'`,
    );
    expect(keys).toEqual([{ state: 'finished', fencing_token: '2' }]);
    expect(await phasesWithTokens('zombie-1')).toEqual(TAKEN_OVER_PHASES);
    expect(stack.sandbox.charges({ reference: 'zombie-ref' })).toHaveLength(1);
    const replay = await send();
    expect(paymentOf(replay)).toEqual(paymentOf(takeover));
    stack.app.faults.disarm('createPayment.provider_charge.before-call');
  });

  it('is refused by the fencing token alone when it wakes while the taker-over is mid-call', async () => {
    // Both owners stand at provider_charge_sent with the request started: only the token
    // differs, so this is the fence and nothing else keeping the zombie out.
    const zombie = stallFirstOwnerAt('createPayment.provider_charge.before-call');
    // The first to get past the provider call is the taker-over.
    const taker = stallFirstOwnerAt('createPayment.provider_charge.after-call');
    const input = paymentInput('zombie-3', { amount: '7.00' });
    const send = () => createPaymentOn(stack, input);

    const zombieSent = send();
    await untilHookRan(() => zombie.reached() > 0, 'the zombie to reach the provider call');
    await leaseEndsAt('zombie-3', RUN_OUT);
    const takerSent = send();
    await untilHookRan(() => taker.reached() > 0, 'the taker to get past the provider call');

    zombie.release();
    const zombieAnswer = await zombieSent;
    expect(errorCodeOf(zombieAnswer)).toBe('IDEMPOTENCY_KEY_IN_USE');
    const { rows: midway } = await stack.db.query<{ state: string }>(
      `SELECT state FROM idempotency_keys WHERE key = 'zombie-3'`,
    );
    expect(midway).toEqual([{ state: 'started' }]);

    taker.release();
    expect(paymentOf(await takerSent).status).toBe('SUCCEEDED');
    expect(await phasesWithTokens('zombie-3')).toEqual(TAKEN_OVER_PHASES);
    expect(stack.sandbox.charges({ reference: 'zombie-3' })).toHaveLength(1);
    stack.app.faults.disarm('createPayment.provider_charge.before-call');
    stack.app.faults.disarm('createPayment.provider_charge.after-call');
  });

  it('a phase under a stale fencing token rolls back its business writes; the current token commits', async () => {
    // Leave a request started at provider_charge_sent, then bump its token as a takeover would.
    stack.app.faults.arm('createPayment.provider_charge.before-call', { kind: 'throw' });
    const input = paymentInput('zombie-2', { amount: '6.00' });
    await createPaymentOn(stack, input);
    stack.app.faults.disarm('createPayment.provider_charge.before-call');
    const { rows: started } = await stack.db.query<{
      id: string;
      resource_id: string;
      fencing_token: string;
      state: string;
      expires_at: Date;
    }>(
      `UPDATE idempotency_keys SET fencing_token = fencing_token + 1 WHERE key = 'zombie-2'
       RETURNING id, resource_id, fencing_token, state, expires_at`,
    );
    expect(started[0]).toMatchObject({ fencing_token: '2', state: 'started' });
    const paymentId = started[0]!.resource_id;
    const ownerWith = (token: string) =>
      createPaymentOwnerOf(stack, 'zombie-2', {
        ...started[0]!,
        fencing_token: token,
        recovery_point: 'provider_charge_sent',
      });
    const mark = (text: string) => describePaymentAs(paymentId, text);

    await expect(
      ownerWith('1').advance('provider_charged', mark('zombie was here')),
    ).rejects.toBeInstanceOf(LeaseLostError);
    const after = await stack.db.query<{ description: string | null }>(
      'SELECT description FROM payments WHERE id = $1',
      [paymentId],
    );
    expect(after.rows[0]?.description).toBeNull();

    await ownerWith('2').advance('provider_charged', mark('current owner'));
    const committed = await stack.db.query<{ description: string | null }>(
      'SELECT description FROM payments WHERE id = $1',
      [paymentId],
    );
    expect(committed.rows[0]?.description).toBe('current owner');
  });
});
