// The sandbox payment provider's contract, over real HTTP. Charges: approved cards, declines,
// request validation and a reused key with another body.
import { describe, expect, it } from 'vitest';
import type { ChargeBody } from '../support/sandbox-psp-contract.ts';
import {
  chargeBody,
  chargeOf,
  errorCodeOf,
  newKey,
  postCharge,
  probeByKey,
  psp,
  useSandboxPsp,
} from '../support/sandbox-psp-contract.ts';

useSandboxPsp();

describe('approved cards', () => {
  it('captures immediately when capture is true', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_visa', capture: true });
    const key = newKey();
    const answer = await postCharge({ key, body });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('idempotent-replayed')).toBeNull();
    expect(chargeOf(answer)).toEqual({
      id: expect.stringMatching(/^ch_[0-9a-f]+$/) as unknown,
      amount: '10.50',
      currency: 'EUR',
      status: 'captured',
      amountCaptured: '10.50',
      amountRefunded: '0.00',
      reference: body.reference,
      idempotencyKey: key,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) as unknown,
      failureCode: null,
      paymentMethod: 'pm_card_visa',
    });
    expect(psp.charges({ reference: body.reference })).toEqual([chargeOf(answer)]);
  });

  it('only authorizes when capture is false, with a zero of the same scale captured', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_mastercard', capture: false });
    const answer = await postCharge({ key: newKey(), body });
    expect(answer.status).toBe(200);
    expect(chargeOf(answer).status).toBe('authorized');
    expect(chargeOf(answer).amountCaptured).toBe('0.00');
    expect(psp.charges({ reference: body.reference })).toHaveLength(1);
  });

  it('replays an approval for the same key and parameters without a second charge', async () => {
    const body = chargeBody();
    const key = newKey();
    const first = await postCharge({ key, body });
    const second = await postCharge({ key, body });
    expect(second.status).toBe(200);
    expect(second.json).toEqual(first.json);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(psp.charges({ reference: body.reference })).toHaveLength(1);
    expect(psp.attempts({ idempotencyKey: key })).toBe(2);
  });
});

describe('declines', () => {
  /** Charges `paymentMethod` once: a 402 with `code`, and a charge recorded as declined for it. */
  async function declinedChargeOf(paymentMethod: string, code: string) {
    const body = chargeBody({ paymentMethod });
    const answer = await postCharge({ key: newKey(), body });
    expect(answer.status).toBe(402);
    expect(errorCodeOf(answer)).toBe(code);
    expect(chargeOf(answer)).toMatchObject({ status: 'declined', failureCode: code });
    return { body, answer };
  }

  it('declines pm_card_declined with 402 and records a declined charge', async () => {
    const { body, answer } = await declinedChargeOf('pm_card_declined', 'CARD_DECLINED');
    expect(chargeOf(answer)).toMatchObject({ amountCaptured: '0.00' });
    expect(psp.charges({ reference: body.reference })).toEqual([chargeOf(answer)]);
  });

  it('replays a decline with the same 402 and charge id', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_declined' });
    const key = newKey();
    const first = await postCharge({ key, body });
    const replay = await postCharge({ key, body });
    expect(replay.status).toBe(402);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(chargeOf(replay).id).toBe(chargeOf(first).id);
    expect(replay.json).toEqual(first.json);
    expect(psp.charges({ reference: body.reference })).toHaveLength(1);
  });

  it('declines an unknown but well-formed token as INVALID_PAYMENT_METHOD', async () => {
    const { body } = await declinedChargeOf('pm_card_no_such_card', 'INVALID_PAYMENT_METHOD');
    expect(psp.charges({ reference: body.reference })).toHaveLength(1);
  });

  it.each(['card_visa', 'pm_', 'pm_card-visa', `pm_${'x'.repeat(101)}`])(
    'rejects the malformed token %s with 400 and records nothing',
    async (paymentMethod) => {
      const body = chargeBody({ paymentMethod });
      const key = newKey();
      const answer = await postCharge({ key, body });
      expect(answer.status).toBe(400);
      expect(errorCodeOf(answer)).toBe('INVALID_REQUEST');
      expect(psp.charges({ reference: body.reference })).toEqual([]);
      expect((await probeByKey(key)).status).toBe(404);
    },
  );
});

describe('request validation', () => {
  it('rejects a request without Idempotency-Key and records nothing', async () => {
    const body = chargeBody();
    const answer = await postCharge({ body });
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: { code: 'IDEMPOTENCY_KEY_MISSING' } });
    expect(psp.charges({ reference: body.reference })).toEqual([]);
    expect(psp.attempts({ reference: body.reference })).toBe(1);
  });

  it('rejects an Idempotency-Key longer than 255 characters', async () => {
    const body = chargeBody();
    const answer = await postCharge({ key: 'k'.repeat(256), body });
    expect(answer.status).toBe(400);
    expect(errorCodeOf(answer)).toBe('INVALID_REQUEST');
    expect(psp.charges({ reference: body.reference })).toEqual([]);
  });

  const invalidBodies: [string, (body: ChargeBody) => unknown][] = [
    ['zero amount', (b) => ({ ...b, amount: '0.00' })],
    ['negative amount', (b) => ({ ...b, amount: '-1.00' })],
    ['numeric amount', (b) => ({ ...b, amount: 10.5 })],
    ['non-decimal amount', (b) => ({ ...b, amount: '1e3' })],
    ['two-letter currency', (b) => ({ ...b, currency: 'EU' })],
    ['missing payment method', (b) => ({ ...b, paymentMethod: undefined })],
    ['missing capture', (b) => ({ ...b, capture: undefined })],
    ['reference too long', (b) => ({ ...b, reference: `${b.reference}${'r'.repeat(255)}` })],
    ['not JSON', () => '{"amount":'],
    ['a JSON array', () => '[]'],
  ];

  it.each(invalidBodies)('rejects %s with 400 and leaves the key unbound', async (_, mutate) => {
    const body = chargeBody();
    const key = newKey();
    const answer = await postCharge({ key, body: mutate(body) });
    expect(answer.status).toBe(400);
    expect(errorCodeOf(answer)).toBe('INVALID_REQUEST');
    expect(typeof (answer.json['error'] as { message?: unknown }).message).toBe('string');
    expect(psp.charges({ reference: body.reference })).toEqual([]);
    // The rejected request bound nothing: the same key still takes a fresh, valid charge.
    const valid = await postCharge({ key, body });
    expect(valid.status).toBe(200);
    expect(valid.headers.get('idempotent-replayed')).toBeNull();
  });

  it('rejects a body over 64 KB', async () => {
    const body = { ...chargeBody(), padding: 'p'.repeat(65 * 1024) };
    const answer = await postCharge({ key: newKey(), body });
    expect(answer.status).toBe(413);
    expect(psp.charges({ reference: body.reference })).toEqual([]);
  });
});

describe('idempotency key mismatch', () => {
  const changes: [string, Partial<ChargeBody>][] = [
    ['amount', { amount: '10.51' }],
    ['currency', { currency: 'USD' }],
    ['paymentMethod', { paymentMethod: 'pm_card_mastercard' }],
    ['reference', { reference: 'another-reference' }],
    ['capture', { capture: false }],
  ];

  it.each(changes)('answers 422 when %s differs and changes nothing', async (_, change) => {
    const body = chargeBody();
    const key = newKey();
    const original = await postCharge({ key, body });
    const mismatch = await postCharge({ key, body: { ...body, ...change } });
    expect(mismatch.status).toBe(422);
    expect(mismatch.json).toEqual({ error: { code: 'IDEMPOTENCY_KEY_MISMATCH' } });
    expect(psp.charges({ reference: body.reference })).toEqual([chargeOf(original)]);
    expect((await probeByKey(key)).json).toEqual(original.json);
    const replay = await postCharge({ key, body });
    expect(replay.json).toEqual(original.json);
  });
});
