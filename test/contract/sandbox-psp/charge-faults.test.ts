// The sandbox payment provider's contract, over real HTTP. Charges under the fault tokens:
// pm_card_unavailable, _slow, _lost_response, _timeout, _unknown and _unreachable.
import { describe, expect, it } from 'vitest';
import { startSandboxPsp } from '../../../sandbox-psp/sandbox-server.ts';
import type { ChargeBody } from '../support/sandbox-psp-contract.ts';
import {
  BLACKHOLE_MS,
  LONG_BLACKHOLE_MS,
  SLOW_MS,
  answeredSoon,
  TIMER_SLACK_MS,
  chargeBody,
  chargeOf,
  getStatement,
  giveUp,
  listByReference,
  newKey,
  newReference,
  postCharge,
  probeByKey,
  psp,
  statementData,
  useSandboxPsp,
} from '../support/sandbox-psp-contract.ts';

useSandboxPsp();

/** One charge with `paymentMethod` under a fresh key, and how long its answer took. */
async function timedCharge(paymentMethod: string) {
  const body = chargeBody({ paymentMethod });
  const startedAt = Date.now();
  const answer = await postCharge({ key: newKey(), body });
  return { body, answer, elapsedMs: Date.now() - startedAt };
}

/**
 * A first charge with `paymentMethod` that the client gives up on, as a call that timed out:
 * once the sandbox has it, not after a guess at how long that takes on a loaded machine.
 */
async function firstAttemptGivenUp(
  paymentMethod: string,
): Promise<{ body: ChargeBody; key: string }> {
  const body = chargeBody({ paymentMethod });
  const key = newKey();
  const controller = new AbortController();
  const call = postCharge({ key, body, signal: controller.signal });
  await expect.poll(() => psp.attempts({ idempotencyKey: key }), { interval: 5 }).toBe(1);
  controller.abort();
  await expect(call).rejects.toThrow();
  return { body, key };
}

describe('pm_card_unavailable', () => {
  it('answers 503 with Retry-After twice, then approves exactly one charge', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_unavailable' });
    const key = newKey();
    for (let attempt = 1; attempt <= 2; attempt += 1) {
      const unavailable = await postCharge({ key, body });
      expect(unavailable.status).toBe(503);
      expect(unavailable.json).toEqual({ error: { code: 'PROVIDER_UNAVAILABLE' } });
      expect(unavailable.headers.get('retry-after')).toBe('1');
      expect(psp.charges({ reference: body.reference })).toEqual([]);
    }
    const approved = await postCharge({ key, body });
    expect(approved.status).toBe(200);
    expect(approved.headers.get('idempotent-replayed')).toBeNull();
    expect(psp.charges({ reference: body.reference })).toEqual([chargeOf(approved)]);
    expect(psp.attempts({ idempotencyKey: key })).toBe(3);
    expect(psp.attempts({ reference: body.reference })).toBe(3);
  });
});

describe('pm_card_slow', () => {
  it('approves only after slowMs', async () => {
    const { answer, elapsedMs } = await timedCharge('pm_card_slow');
    expect(elapsedMs).toBeGreaterThanOrEqual(SLOW_MS - TIMER_SLACK_MS);
    expect(answer.status).toBe(200);
    expect(chargeOf(answer).status).toBe('captured');
  });

  it('makes a concurrent duplicate wait for the first result instead of charging twice', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_slow' });
    const key = newKey();
    const first = postCharge({ key, body });
    // The duplicate must arrive while the first is in flight: once the sandbox has it.
    await expect.poll(() => psp.attempts({ idempotencyKey: key }), { interval: 5 }).toBe(1);
    const duplicate = postCharge({ key, body });
    const [a, b] = await Promise.all([first, duplicate]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(chargeOf(b).id).toBe(chargeOf(a).id);
    expect(a.headers.get('idempotent-replayed')).toBeNull();
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(psp.charges({ reference: body.reference })).toHaveLength(1);
    expect(psp.attempts({ idempotencyKey: key })).toBe(2);
  });
});

describe('pm_card_lost_response', () => {
  it('applies the charge but never answers the first attempt; later calls see it', async () => {
    const { body, key } = await firstAttemptGivenUp('pm_card_lost_response');
    const probe = await probeByKey(key);
    expect(probe.status).toBe(200);
    expect(chargeOf(probe)).toMatchObject({ idempotencyKey: key, status: 'captured' });
    const repeat = await postCharge({ key, body });
    expect(repeat.status).toBe(200);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(chargeOf(repeat).id).toBe(chargeOf(probe).id);
    expect(psp.charges({ reference: body.reference })).toHaveLength(1);
    expect(psp.attempts({ idempotencyKey: key })).toBe(2);
  });
});

describe('pm_card_timeout', () => {
  it('hangs the first attempt without charging, then approves exactly once', async () => {
    const { body, key } = await firstAttemptGivenUp('pm_card_timeout');
    expect(psp.charges({ reference: body.reference })).toEqual([]);
    expect((await probeByKey(key)).status).toBe(404);
    const second = await postCharge({ key, body });
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    const third = await postCharge({ key, body });
    expect(chargeOf(third).id).toBe(chargeOf(second).id);
    expect(psp.charges({ reference: body.reference })).toEqual([chargeOf(second)]);
    expect(psp.attempts({ idempotencyKey: key })).toBe(3);
  });
});

describe('pm_card_unknown', () => {
  it('hides the applied charge from calls and probes while the blackhole lasts', async () => {
    // A blackhole that outlasts the test: every call below that must hang does, however slowly
    // a loaded machine runs them, and every call that must be answered gets answeredSoon.
    const held = await startSandboxPsp({ port: 0, blackholeMs: LONG_BLACKHOLE_MS });
    try {
      const body = chargeBody({ paymentMethod: 'pm_card_unknown' });
      const key = newKey();
      const call = { baseUrl: held.url, key, body };
      await expect(postCharge({ ...call, signal: giveUp() })).rejects.toThrow();
      await expect(postCharge({ ...call, signal: giveUp() })).rejects.toThrow();
      await expect(probeByKey(key, giveUp(), held.url)).rejects.toThrow();
      await expect(listByReference(body.reference, giveUp(), held.url)).rejects.toThrow();
      expect(held.charges({ reference: body.reference })).toMatchObject([
        { idempotencyKey: key, status: 'captured' },
      ]);
      // The blackhole is scoped to its key and reference: other lookups are answered.
      expect((await listByReference(newReference(), answeredSoon(), held.url)).status).toBe(200);
      expect((await probeByKey(newKey(), answeredSoon(), held.url)).status).toBe(404);
    } finally {
      await held.close();
    }
  });

  it('shows the applied charge to calls and probes once the blackhole ends', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_unknown' });
    const key = newKey();
    const startedAt = Date.now();
    await expect(postCharge({ key, body, signal: giveUp() })).rejects.toThrow();
    const probe = await probeByKey(key);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(BLACKHOLE_MS - TIMER_SLACK_MS);
    expect(probe.status).toBe(200);
    expect(chargeOf(probe)).toMatchObject({ idempotencyKey: key, status: 'captured' });
    const listing = await listByReference(body.reference, answeredSoon());
    expect(listing.json).toEqual({ data: [chargeOf(probe)] });
    const repeat = await postCharge({ key, body, signal: answeredSoon() });
    expect(repeat.status).toBe(200);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(chargeOf(repeat).id).toBe(chargeOf(probe).id);
    expect(psp.charges({ reference: body.reference })).toHaveLength(1);
  });

  it('answers a call that arrived during the blackhole once it ends', async () => {
    const { body, answer, elapsedMs } = await timedCharge('pm_card_unknown');
    expect(elapsedMs).toBeGreaterThanOrEqual(BLACKHOLE_MS - TIMER_SLACK_MS);
    expect(answer.status).toBe(200);
    expect(psp.charges({ reference: body.reference })).toEqual([chargeOf(answer)]);
  });
});

describe('pm_card_unreachable', () => {
  it('hangs every attempt for every key and never records anything', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_unreachable' });
    const key = newKey();
    const startedAt = new Date();
    await expect(postCharge({ key, body, signal: AbortSignal.timeout(100) })).rejects.toThrow();
    await expect(postCharge({ key, body, signal: AbortSignal.timeout(100) })).rejects.toThrow();
    const otherKey = newKey();
    await expect(postCharge({ key: otherKey, body, signal: giveUp() })).rejects.toThrow();
    // Even a key already bound to a charge: the provider never sees the call, so not even a 422.
    const bound = await postCharge({ key: newKey(), body: chargeBody() });
    const boundKey = chargeOf(bound).idempotencyKey;
    await expect(postCharge({ key: boundKey, body, signal: giveUp() })).rejects.toThrow();
    // The calls did arrive; they were just never answered.
    expect(psp.attempts({ reference: body.reference })).toBe(4);

    expect(psp.charges({ reference: body.reference })).toEqual([]);
    for (const probedKey of [key, otherKey]) {
      const probe = await probeByKey(probedKey, giveUp());
      expect(probe.status).toBe(404);
      expect(probe.json).toEqual({ error: { code: 'CHARGE_NOT_FOUND' } });
    }
    expect((await probeByKey(boundKey, giveUp())).json).toEqual(bound.json);
    expect((await listByReference(body.reference, giveUp())).json).toEqual({ data: [] });
    const statement = await getStatement({
      from: startedAt.toISOString(),
      to: new Date(Date.now() + 1).toISOString(),
      signal: giveUp(),
    });
    expect(statement.status).toBe(200);
    expect(statementData(statement)).toEqual([chargeOf(bound)]);
  });
});
