// The sandbox payment provider's contract, over real HTTP. Capture and void of an authorised
// charge.
import { describe, expect, it } from 'vitest';
import {
  authorizedCharge,
  capture,
  capturedCharge,
  chargeOf,
  current,
  declinedCharge,
  expectError,
  expectRefusedLeavingCharge,
  expectOperationReplayed,
  isReplay,
  newKey,
  postOperation,
  psp,
  voidCharge,
  useSandboxPsp,
} from '../support/sandbox-psp-contract.ts';

useSandboxPsp();

describe('capture', () => {
  it('captures the full authorized amount once and replays it for the same key', async () => {
    const charge = await authorizedCharge('10.50');
    const key = newKey();
    const captured = await capture({ chargeId: charge.id, amount: '10.50', key });
    expect(captured.status).toBe(200);
    expect(isReplay(captured)).toBe(false);
    expect(captured.json).toEqual({
      charge: { ...charge, status: 'captured', amountCaptured: '10.50' },
    });
    const replay = await capture({ chargeId: charge.id, amount: '10.50', key });
    expect(replay.status).toBe(200);
    expectOperationReplayed({ applied: captured, replay, charge, kind: 'capture', key });
  });

  it('captures part of the authorization at the charge scale and releases the rest', async () => {
    const charge = await authorizedCharge('10.50');
    const partial = await capture({ chargeId: charge.id, amount: '4' });
    expect(partial.status).toBe(200);
    expect(chargeOf(partial)).toEqual({ ...charge, status: 'captured', amountCaptured: '4.00' });
    // The released 6.50 cannot be captured later: a charge is captured once.
    const rest = await capture({ chargeId: charge.id, amount: '6.50' });
    expectError(rest, { status: 409, code: 'INVALID_CHARGE_STATE' });
    expect(current(charge)?.amountCaptured).toBe('4.00');
  });

  it('accepts trailing zeros beyond the charge scale', async () => {
    const charge = await authorizedCharge('7');
    const captured = await capture({ chargeId: charge.id, amount: '5.000' });
    expect(captured.status).toBe(200);
    expect(chargeOf(captured).amountCaptured).toBe('5');
  });

  it('refuses a second capture with another key with 409, stored and replayed', async () => {
    const charge = await authorizedCharge('10.50');
    const first = await capture({ chargeId: charge.id, amount: '10.50' });
    const key = newKey();
    const second = await capture({ chargeId: charge.id, amount: '1.00', key });
    expect(second.json).toEqual({ error: { code: 'INVALID_CHARGE_STATE' } });
    expect(second.status).toBe(409);
    const replay = await capture({ chargeId: charge.id, amount: '1.00', key });
    expect(replay.status).toBe(409);
    expect(isReplay(replay)).toBe(true);
    expect(replay.json).toEqual(second.json);
    expect(current(charge)).toEqual(chargeOf(first));
    expect(psp.operations({ chargeId: charge.id }).map((o) => o.applied)).toEqual([
      true,
      false,
      false,
    ]);
  });

  it('refuses a capture above the authorized amount with 422, stored, charge untouched', async () => {
    const charge = await authorizedCharge('10.50');
    const key = newKey();
    const over = await capture({ chargeId: charge.id, amount: '10.51', key });
    expectRefusedLeavingCharge(over, charge, { status: 422, code: 'AMOUNT_EXCEEDS_AUTHORIZED' });
    // Another key can still capture; the refused key stays bound to its refusal.
    expect((await capture({ chargeId: charge.id, amount: '10.50' })).status).toBe(200);
    const replay = await capture({ chargeId: charge.id, amount: '10.51', key });
    expectError(replay, { status: 422, code: 'AMOUNT_EXCEEDS_AUTHORIZED' });
    expect(isReplay(replay)).toBe(true);
  });

  it('refuses to capture a declined charge with 409', async () => {
    const charge = await declinedCharge();
    const answer = await capture({ chargeId: charge.id, amount: '1.00' });
    expectRefusedLeavingCharge(answer, charge, { status: 409, code: 'INVALID_CHARGE_STATE' });
  });

  it('answers 404 CHARGE_NOT_FOUND for an unknown charge, stored and replayed', async () => {
    const key = newKey();
    const chargeId = 'ch_doesnotexist';
    const missing = await capture({ chargeId, amount: '1.00', key });
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ error: { code: 'CHARGE_NOT_FOUND' } });
    const replay = await capture({ chargeId, amount: '1.00', key });
    expect(replay.status).toBe(404);
    expect(isReplay(replay)).toBe(true);
  });

  const malformed: [string, string | undefined | Record<string, unknown>][] = [
    ['missing amount', {}],
    ['zero amount', { amount: '0.00' }],
    ['negative amount', { amount: '-1.00' }],
    ['numeric amount', { amount: 1 }],
    ['exponent amount', { amount: '1e1' }],
    ['not JSON', '{"amount":'],
    ['a JSON array', '[]'],
    ['no body', undefined],
  ];

  it.each(malformed)('rejects %s with 400 and binds nothing', async (_, body) => {
    const charge = await authorizedCharge('10.50');
    const key = newKey();
    const answer = await postOperation({ chargeId: charge.id, path: 'capture', key, body });
    expectRefusedLeavingCharge(answer, charge, { status: 400, code: 'INVALID_REQUEST' });
    expect(psp.operations({ chargeId: charge.id })).toEqual([]);
    const valid = await capture({ chargeId: charge.id, amount: '1.00', key });
    expect(valid.status).toBe(200);
    expect(isReplay(valid)).toBe(false);
  });

  it('rejects an amount finer than the charge scale with 400 and binds nothing', async () => {
    const charge = await authorizedCharge('10.50');
    const key = newKey();
    const answer = await capture({ chargeId: charge.id, amount: '1.001', key });
    expectRefusedLeavingCharge(answer, charge, { status: 400, code: 'INVALID_REQUEST' });
    const valid = await capture({ chargeId: charge.id, amount: '1.00', key });
    expect(valid.status).toBe(200);
    expect(isReplay(valid)).toBe(false);
  });

  it('requires an Idempotency-Key', async () => {
    const charge = await authorizedCharge('10.50');
    const body = { amount: '1.00' };
    const answer = await postOperation({ chargeId: charge.id, path: 'capture', body });
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: { code: 'IDEMPOTENCY_KEY_MISSING' } });
    expect(current(charge)).toEqual(charge);
  });

  it('applies one capture for ten concurrent requests with one key', async () => {
    const charge = await authorizedCharge('10.50');
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => capture({ chargeId: charge.id, amount: '3.00', key })),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(answers.filter((a) => !isReplay(a))).toHaveLength(1);
    for (const answer of answers) expect(answer.json).toEqual(answers[0]?.json);
    const operations = psp.operations({ chargeId: charge.id });
    expect(operations).toHaveLength(10);
    expect(operations.filter((o) => o.applied)).toHaveLength(1);
  });
});

describe('void', () => {
  it('voids an authorized charge (no body) once and replays it', async () => {
    const charge = await authorizedCharge('10.50');
    const key = newKey();
    const voided = await voidCharge({ chargeId: charge.id, key });
    expect(voided.status).toBe(200);
    expect(voided.json).toEqual({ charge: { ...charge, status: 'voided' } });
    const replay = await voidCharge({ chargeId: charge.id, key });
    expectOperationReplayed({ applied: voided, replay, charge, kind: 'void', key });
  });

  it('accepts an empty JSON object as the body', async () => {
    const charge = await authorizedCharge('10.50');
    const body = {};
    const voided = await postOperation({ chargeId: charge.id, path: 'void', key: newKey(), body });
    expect(voided.status).toBe(200);
    expect(chargeOf(voided).status).toBe('voided');
  });

  it('refuses to capture a voided charge with 409', async () => {
    const charge = await authorizedCharge('10.50');
    const voided = await voidCharge({ chargeId: charge.id });
    const key = newKey();
    const captured = await capture({ chargeId: charge.id, amount: '1.00', key });
    expectError(captured, { status: 409, code: 'INVALID_CHARGE_STATE' });
    expect(isReplay(await capture({ chargeId: charge.id, amount: '1.00', key }))).toBe(true);
    expect(current(charge)).toEqual(chargeOf(voided));
  });

  it('refuses to void a captured, voided or declined charge with 409, stored', async () => {
    const captured = await capturedCharge('10.00');
    const voided = await authorizedCharge('10.50');
    await voidCharge({ chargeId: voided.id });
    const declined = await declinedCharge();
    for (const charge of [captured, voided, declined]) {
      const key = newKey();
      expectError(await voidCharge({ chargeId: charge.id, key }), {
        status: 409,
        code: 'INVALID_CHARGE_STATE',
      });
      const replay = await voidCharge({ chargeId: charge.id, key });
      expectError(replay, { status: 409, code: 'INVALID_CHARGE_STATE' });
      expect(isReplay(replay)).toBe(true);
    }
    expect(current(captured)).toEqual(captured);
    expect(current(declined)).toEqual(declined);
  });

  it('answers 404 CHARGE_NOT_FOUND for an unknown charge, stored', async () => {
    const key = newKey();
    expectError(await voidCharge({ chargeId: 'ch_missing', key }), {
      status: 404,
      code: 'CHARGE_NOT_FOUND',
    });
    expect(isReplay(await voidCharge({ chargeId: 'ch_missing', key }))).toBe(true);
  });

  it.each([
    ['parameters', { amount: '1.00' }],
    ['a JSON array', '[]'],
    ['not JSON', '{'],
  ])('rejects a void with %s with 400 and binds nothing', async (_, body) => {
    const charge = await authorizedCharge('10.50');
    const key = newKey();
    const answer = await postOperation({ chargeId: charge.id, path: 'void', key, body });
    expectRefusedLeavingCharge(answer, charge, { status: 400, code: 'INVALID_REQUEST' });
    const valid = await voidCharge({ chargeId: charge.id, key });
    expect(valid.status).toBe(200);
    expect(isReplay(valid)).toBe(false);
  });
});
