// The sandbox payment provider's contract, over real HTTP. Refunds of a captured charge.
import { describe, expect, it } from 'vitest';
import {
  authorizedCharge,
  capture,
  capturedCharge,
  chargeOf,
  current,
  declinedCharge,
  expectError,
  get,
  isReplay,
  newKey,
  postOperation,
  psp,
  refund,
  refundOf,
  voidCharge,
  useSandboxPsp,
} from '../support/sandbox-psp-contract.ts';

useSandboxPsp();

describe('refunds', () => {
  it('refunds a captured charge in parts and refuses going over what is left', async () => {
    const charge = await capturedCharge('10.00');
    const firstKey = newKey();
    const first = await refund({
      chargeId: charge.id,
      amount: '3',
      key: firstKey,
      reason: 'requested_by_customer',
    });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({
      refund: {
        id: expect.stringMatching(/^re_[0-9a-f]+$/) as unknown,
        chargeId: charge.id,
        amount: '3.00',
        status: 'succeeded',
        reason: 'requested_by_customer',
        idempotencyKey: firstKey,
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) as unknown,
      },
      charge: { ...charge, amountRefunded: '3.00' },
    });
    const second = await refund({ chargeId: charge.id, amount: '4.5' });
    expect(refundOf(second)).toMatchObject({ amount: '4.50', reason: null });
    expect(chargeOf(second).amountRefunded).toBe('7.50');

    const overKey = newKey();
    const over = await refund({ chargeId: charge.id, amount: '2.51', key: overKey });
    expect(over.status).toBe(422);
    expect(over.json).toEqual({ error: { code: 'AMOUNT_EXCEEDS_REFUNDABLE' } });
    expect(isReplay(await refund({ chargeId: charge.id, amount: '2.51', key: overKey }))).toBe(
      true,
    );
    const last = await refund({ chargeId: charge.id, amount: '2.50' });
    expect(chargeOf(last)).toEqual({ ...charge, status: 'captured', amountRefunded: '10.00' });
    const nothingLeft = await refund({ chargeId: charge.id, amount: '0.01' });
    expectError(nothingLeft, { status: 422, code: 'AMOUNT_EXCEEDS_REFUNDABLE' });

    const refunds = [refundOf(first), refundOf(second), refundOf(last)];
    expect(psp.refunds({ chargeId: charge.id })).toEqual(refunds);
    expect((await get(`/v1/charges/${charge.id}/refunds`)).json).toEqual({ data: refunds });
    expect(current(charge)).toEqual(chargeOf(last));
  });

  it('limits refunds to the captured part of a partial capture', async () => {
    const charge = await authorizedCharge('10.00');
    await capture({ chargeId: charge.id, amount: '6.00' });
    const over = await refund({ chargeId: charge.id, amount: '6.01' });
    expectError(over, { status: 422, code: 'AMOUNT_EXCEEDS_REFUNDABLE' });
    const all = await refund({ chargeId: charge.id, amount: '6.00' });
    expect(all.status).toBe(200);
    expect(chargeOf(all)).toMatchObject({ amountCaptured: '6.00', amountRefunded: '6.00' });
  });

  it('refuses a refund before capture with 409 and keeps that answer after capture', async () => {
    const charge = await authorizedCharge('10.00');
    const key = newKey();
    const early = await refund({ chargeId: charge.id, amount: '1.00', key });
    expectError(early, { status: 409, code: 'INVALID_CHARGE_STATE' });
    await capture({ chargeId: charge.id, amount: '10.00' });
    const replay = await refund({ chargeId: charge.id, amount: '1.00', key });
    expectError(replay, { status: 409, code: 'INVALID_CHARGE_STATE' });
    expect(isReplay(replay)).toBe(true);
    expect((await refund({ chargeId: charge.id, amount: '1.00' })).status).toBe(200);
    expect(psp.refunds({ chargeId: charge.id })).toHaveLength(1);
  });

  it('refuses to refund a voided or declined charge with 409', async () => {
    const voided = await authorizedCharge('10.00');
    await voidCharge({ chargeId: voided.id });
    const declined = await declinedCharge();
    for (const charge of [voided, declined]) {
      const answer = await refund({ chargeId: charge.id, amount: '1.00' });
      expectError(answer, { status: 409, code: 'INVALID_CHARGE_STATE' });
      expect(psp.refunds({ chargeId: charge.id })).toEqual([]);
    }
  });

  it('answers 404 CHARGE_NOT_FOUND for an unknown charge, stored', async () => {
    const key = newKey();
    const missing = await refund({ chargeId: 'ch_missing', amount: '1.00', key });
    expectError(missing, { status: 404, code: 'CHARGE_NOT_FOUND' });
    expect(isReplay(await refund({ chargeId: 'ch_missing', amount: '1.00', key }))).toBe(true);
    expectError(await get('/v1/charges/ch_missing/refunds'), {
      status: 404,
      code: 'CHARGE_NOT_FOUND',
    });
  });

  it('refunds once for ten concurrent requests with one key', async () => {
    const charge = await capturedCharge('10.00');
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => refund({ chargeId: charge.id, amount: '1.00', key })),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(answers.filter((a) => !isReplay(a))).toHaveLength(1);
    expect(new Set(answers.map((a) => refundOf(a).id)).size).toBe(1);
    expect(psp.refunds({ chargeId: charge.id })).toHaveLength(1);
    expect(current(charge)?.amountRefunded).toBe('1.00');
  });

  it('never refunds more than was captured under concurrent refunds with different keys', async () => {
    const charge = await capturedCharge('10.00');
    const amounts = Array.from({ length: 20 }, () => '1.00');
    amounts.splice(10, 0, '5.00');
    const answers = await Promise.all(
      amounts.map((amount) => refund({ chargeId: charge.id, amount })),
    );
    const applied = answers.filter((a) => a.status === 200);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expectError(refused, { status: 422, code: 'AMOUNT_EXCEEDS_REFUNDABLE' });
    }
    // Whatever the order, 1.00 refunds fill any gap the 5.00 leaves: exactly 10.00 goes back.
    const refundedCents = applied.reduce(
      (sum, a) => sum + Math.round(Number(refundOf(a).amount) * 100),
      0,
    );
    expect(refundedCents).toBe(1_000);
    expect(current(charge)?.amountRefunded).toBe('10.00');
    expect(psp.refunds({ chargeId: charge.id })).toHaveLength(applied.length);
    const operations = psp.operations({ chargeId: charge.id });
    expect(operations).toHaveLength(amounts.length);
    expect(operations.filter((o) => o.applied)).toHaveLength(applied.length);
  });

  const malformed: [string, Record<string, unknown>][] = [
    ['missing amount', { reason: 'duplicate' }],
    ['zero amount', { amount: '0' }],
    ['empty reason', { amount: '1.00', reason: '' }],
    ['numeric reason', { amount: '1.00', reason: 7 }],
    ['reason too long', { amount: '1.00', reason: 'r'.repeat(256) }],
  ];

  it.each(malformed)('rejects %s with 400 and binds nothing', async (_, body) => {
    const charge = await capturedCharge('10.00');
    const key = newKey();
    const answer = await postOperation({ chargeId: charge.id, path: 'refunds', key, body });
    expectError(answer, { status: 400, code: 'INVALID_REQUEST' });
    expect(psp.refunds({ chargeId: charge.id })).toEqual([]);
    const valid = await refund({ chargeId: charge.id, amount: '1.00', key });
    expect(valid.status).toBe(200);
    expect(isReplay(valid)).toBe(false);
  });
});
