import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../services/kernel/canonical-json.ts';
import { derivedKey } from '../../services/kernel/idempotency/derived-key.ts';
import { requestHash } from '../../services/kernel/idempotency/request-hash.ts';
import {
  normaliseCreatePayment,
  type CreatePaymentInput,
} from '../../services/payments/create-payment.command.ts';
import { CREATE_PAYMENT } from '../../services/payments/create-payment.flow.ts';
import { providerChargeKey } from '../../services/provider/provider-keys.ts';

const TENANT = '00000000-0000-4000-8000-000000000001';

function hashOf(input: Partial<CreatePaymentInput>): string {
  const { command } = normaliseCreatePayment({
    tenantId: TENANT,
    idempotencyKey: 'k',
    amount: '10.50',
    currency: 'EUR',
    paymentMethod: 'pm_card_visa',
    ...input,
  });
  return requestHash(CREATE_PAYMENT, command).toString('hex');
}

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: [2, { d: 1, c: 0 }], a: null })).toBe(
      '{"a":null,"b":[2,{"c":0,"d":1}]}',
    );
  });
});

describe('the createPayment request hash', () => {
  it('is the same for equivalent commands', () => {
    const base = hashOf({ metadata: { x: 1, y: { p: 1, q: 2 } } });
    expect(hashOf({ amount: '10.5', metadata: { y: { q: 2, p: 1 }, x: 1 } })).toBe(base);
    expect(
      hashOf({
        currency: 'eur',
        captureMethod: 'AUTOMATIC',
        metadata: { x: 1, y: { p: 1, q: 2 } },
      }),
    ).toBe(base);
    expect(hashOf({ idempotencyKey: 'another-key', metadata: { x: 1, y: { p: 1, q: 2 } } })).toBe(
      base,
    );
  });

  it('differs when the command differs', () => {
    const base = hashOf({});
    for (const change of [
      { amount: '10.51' },
      { currency: 'USD' },
      { paymentMethod: 'pm_card_mastercard' },
      { captureMethod: 'MANUAL' as const },
      { reference: 'r' },
      { description: 'd' },
      { metadata: { x: 1 } },
    ]) {
      expect(hashOf(change), JSON.stringify(change)).not.toBe(base);
    }
  });
});

describe('derived keys', () => {
  it('are built from our own ids and never contain the client’s key', () => {
    const paymentId = '3f1c6d2e-8a7b-4c5d-9e0f-1a2b3c4d5e6f';
    expect(providerChargeKey(paymentId)).toBe(`provider_payment_${paymentId}`);
    expect(() =>
      derivedKey({ system: 'provider', subject: 'payment', ourId: 'client-key-123' }),
    ).toThrow();
    expect(
      derivedKey({ system: 'ledger', subject: 'payment', ourId: paymentId, step: 'capture' }),
    ).toBe(`ledger_payment_${paymentId}_capture`);
  });
});
