// The sandbox payment provider's contract, over real HTTP. Idempotency keys of capture, void and
// refund, and pm_card_unavailable on each.
import { describe, expect, it } from 'vitest';
import {
  authorizedCharge,
  capture,
  capturedCharge,
  chargeBody,
  chargeOf,
  current,
  expectError,
  isReplay,
  newKey,
  postCharge,
  probeByKey,
  psp,
  refund,
  unavailableCharge,
  voidCharge,
  useSandboxPsp,
} from '../support/sandbox-psp-contract.ts';

useSandboxPsp();

describe('operation idempotency keys', () => {
  const mismatch = { status: 422, code: 'IDEMPOTENCY_KEY_MISMATCH' };

  it('answers 422 to the same key with another amount, operation or charge', async () => {
    const charge = await authorizedCharge('10.00');
    const other = await authorizedCharge('10.00');
    const key = newKey();
    const original = await capture({ chargeId: charge.id, amount: '5.00', key });
    expect(original.status).toBe(200);
    expectError(await capture({ chargeId: charge.id, amount: '6.00', key }), mismatch);
    expectError(await capture({ chargeId: charge.id, amount: '5.0', key }), mismatch);
    expectError(await voidCharge({ chargeId: charge.id, key }), mismatch);
    expectError(await refund({ chargeId: charge.id, amount: '5.00', key }), mismatch);
    expectError(await capture({ chargeId: other.id, amount: '5.00', key }), mismatch);
    expect(current(charge)).toEqual(chargeOf(original));
    expect(current(other)).toEqual(other);
    expect(psp.refunds({ chargeId: charge.id })).toEqual([]);
    const replay = await capture({ chargeId: charge.id, amount: '5.00', key });
    expect(isReplay(replay)).toBe(true);
    expect(replay.json).toEqual(original.json);
  });

  it('applies one of concurrent requests with one key on two charges, the rest mismatch', async () => {
    const charges = [await authorizedCharge('10.00'), await authorizedCharge('10.00')];
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        capture({ chargeId: charges[index % 2]?.id ?? '', amount: '1.00', key }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 422)).toHaveLength(5);
    const capturedCount = charges.filter((c) => current(c)?.status === 'captured').length;
    expect(capturedCount).toBe(1);
  });

  it('binds a refund key to its reason too', async () => {
    const charge = await capturedCharge('10.00');
    const key = newKey();
    expect((await refund({ chargeId: charge.id, amount: '1.00', key, reason: 'a' })).status).toBe(
      200,
    );
    expectError(await refund({ chargeId: charge.id, amount: '1.00', key, reason: 'b' }), mismatch);
    expectError(await refund({ chargeId: charge.id, amount: '1.00', key }), mismatch);
    expect(current(charge)?.amountRefunded).toBe('1.00');
  });

  it('binds a refused key to its refusal: another operation with it is a mismatch', async () => {
    const key = newKey();
    expect((await voidCharge({ chargeId: 'ch_missing', key })).status).toBe(404);
    const charge = await authorizedCharge('10.00');
    expectError(await voidCharge({ chargeId: charge.id, key }), mismatch);
    expect(current(charge)).toEqual(charge);
  });

  it('keeps charge creation keys and operation keys in one space', async () => {
    const body = chargeBody({ capture: false });
    const chargeKey = newKey();
    const charge = chargeOf(await postCharge({ key: chargeKey, body }));
    expectError(await capture({ chargeId: charge.id, amount: '1.00', key: chargeKey }), mismatch);
    expect(current(charge)).toEqual(charge);
    const captureKey = newKey();
    expect((await capture({ chargeId: charge.id, amount: '1.00', key: captureKey })).status).toBe(
      200,
    );
    expectError(await postCharge({ key: captureKey, body: chargeBody() }), mismatch);
    expect((await probeByKey(captureKey)).status).toBe(404);
  });
});

describe('pm_card_unavailable on capture, void and refund', () => {
  it('answers the first capture per key with 503, storing nothing, then applies it', async () => {
    const charge = await unavailableCharge({ capture: false });
    const key = newKey();
    const unavailable = await capture({ chargeId: charge.id, amount: '10.50', key });
    expect(unavailable.status).toBe(503);
    expect(unavailable.json).toEqual({ error: { code: 'PROVIDER_UNAVAILABLE' } });
    expect(unavailable.headers.get('retry-after')).toBe('1');
    expect(current(charge)).toEqual(charge);
    const applied = await capture({ chargeId: charge.id, amount: '10.50', key });
    expect(applied.status).toBe(200);
    expect(isReplay(applied)).toBe(false);
    expect(chargeOf(applied).status).toBe('captured');
    expect(isReplay(await capture({ chargeId: charge.id, amount: '10.50', key }))).toBe(true);
    expect(psp.operations({ chargeId: charge.id })).toEqual([
      { kind: 'capture', idempotencyKey: key, applied: false },
      { kind: 'capture', idempotencyKey: key, applied: true },
      { kind: 'capture', idempotencyKey: key, applied: false },
    ]);
  });

  it('answers the first refund of every key with 503, then refunds once', async () => {
    const charge = await unavailableCharge({ capture: true });
    for (const [index, key] of [newKey(), newKey()].entries()) {
      expect((await refund({ chargeId: charge.id, amount: '1.00', key })).status).toBe(503);
      expect(psp.refunds({ chargeId: charge.id })).toHaveLength(index);
      expect((await refund({ chargeId: charge.id, amount: '1.00', key })).status).toBe(200);
    }
    expect(psp.refunds({ chargeId: charge.id })).toHaveLength(2);
    expect(current(charge)?.amountRefunded).toBe('2.00');
  });

  it('does not store the 503: a refusal comes only on the next attempt', async () => {
    const charge = await unavailableCharge({ capture: true });
    const key = newKey();
    expect((await voidCharge({ chargeId: charge.id, key })).status).toBe(503);
    const refused = await voidCharge({ chargeId: charge.id, key });
    expectError(refused, { status: 409, code: 'INVALID_CHARGE_STATE' });
    expect(isReplay(refused)).toBe(false);
    expect(isReplay(await voidCharge({ chargeId: charge.id, key }))).toBe(true);
  });

  it('answers the first void per key with 503, then voids', async () => {
    const charge = await unavailableCharge({ capture: false });
    const key = newKey();
    expect((await voidCharge({ chargeId: charge.id, key })).status).toBe(503);
    expect(current(charge)?.status).toBe('authorized');
    expect(chargeOf(await voidCharge({ chargeId: charge.id, key })).status).toBe('voided');
  });
});
