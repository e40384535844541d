import { describe, expect, it } from 'vitest';
import { canonicalJson, type JsonValue } from '../../lib/canonical-json.ts';
import { Keyring } from '../../lib/crypto/keyring.ts';
import type { OperationDef } from '../../lib/idempotency/operation.ts';
import { keyedRequestHash, requestHash } from '../../lib/idempotency/request-hash.ts';
import { CANCEL_PAYMENT } from '../../services/payments/cancel-payment.flow.ts';
import { CAPTURE_PAYMENT } from '../../services/payments/capture-payment.flow.ts';
import { normaliseOperation } from '../../services/payments/payment-operation.command.ts';
import { REFUND_PAYMENT } from '../../services/payments/refund-payment.flow.ts';
import {
  normaliseCreatePayment,
  type CreatePaymentInput,
} from '../../services/payments/create-payment.command.ts';
import { CREATE_PAYMENT } from '../../services/payments/create-payment.flow.ts';
import { providerRequestKey } from '../../services/payments/provider-keys.ts';

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

/**
 * The request hash is a contract: a retry still in its window is compared with the hash its
 * first request stored, perhaps by a process running last month's code. These values were
 * computed once; a refactor of normalisation, canonical JSON or the hash that changes any of
 * them would make old retries look like other commands (IDEMPOTENCY_KEY_REUSED). If a change
 * is meant, it is a new operation version (see operation.ts), never an edit of these values.
 */
describe('pinned request hashes', () => {
  /** A synthetic data key (32 bytes of 0x11), as the test stacks use. */
  const keyring = Keyring.parse(`test1:${Buffer.alloc(32, 0x11).toString('base64')}`);
  const PAYMENT = '3F1C6D2E-8A7B-4C5D-9E0F-1A2B3C4D5E6F';
  const operationInput = (fields: { amount: string | null; reason: string | null }) => ({
    tenantId: TENANT,
    idempotencyKey: 'k',
    paymentId: PAYMENT,
    ...fields,
  });
  const create = (input: Partial<CreatePaymentInput>) =>
    normaliseCreatePayment({
      tenantId: TENANT,
      idempotencyKey: 'k',
      amount: '10.5',
      currency: 'eur',
      paymentMethod: 'pm_card_visa',
      ...input,
    }).command;
  interface Pinned {
    operation: OperationDef;
    command: JsonValue;
    /** Plain SHA-256, as rows written before keyed hashes store it. */
    plain: string;
    /** HMAC under the synthetic key `test1`, as rows are written now. */
    keyed: string;
  }
  const cases: Array<[string, Pinned]> = [
    [
      'a payment with nested metadata',
      {
        operation: CREATE_PAYMENT,
        command: create({
          reference: 'order-1042',
          metadata: { b: [1, { d: 'x', c: true }], a: 'é' },
        }),
        plain: 'd18816e88058791a719eabcf7cee150558cb4908f0376e333171a7ab3d9b4278',
        keyed: '155b1614527c804476b1a06db340b72ef56e7a8fdbcb9032cf18c4ddf3735330',
      },
    ],
    [
      'a manual yen payment with a description beyond the basic plane',
      {
        operation: CREATE_PAYMENT,
        command: create({
          amount: '1000',
          currency: 'JPY',
          paymentMethod: 'pm_card_mastercard',
          captureMethod: 'MANUAL',
          description: 'tea \u{1f375}',
        }),
        plain: '0909a5a11a2223112362670db1d33e9c2020b47cba5ad56b42390877201e5ff5',
        keyed: 'a7fba52aa2f0e32ca40350aba53de76004ae3c84be2964f1e3f8e2d6d8fc997a',
      },
    ],
    [
      'a partial capture',
      {
        operation: CAPTURE_PAYMENT,
        command: normaliseOperation(operationInput({ amount: '5.0', reason: null })),
        plain: 'e857207d868fdec635cf97ac67cfe0a9d93be1f74085481aad4d00a216fce784',
        keyed: 'd4fe2b07d414a70e6241870ef73691e441a6da8add48bf6344c8bd8f68ce7fde',
      },
    ],
    [
      'a refund with a reason',
      {
        operation: REFUND_PAYMENT,
        command: normaliseOperation(operationInput({ amount: '1.50', reason: 'duplicate' })),
        plain: '0a39cd85151957828f8c480b499919d0c6ab18bc25c466693b1a423ce4ba3eaf',
        keyed: 'ef80531203495bf7b5d51751076538e5f361d3647cdf2a6c3baa857a7a67db04',
      },
    ],
    [
      'a cancel',
      {
        operation: CANCEL_PAYMENT,
        command: normaliseOperation(operationInput({ amount: null, reason: null })),
        plain: '6a12f87fb593de18d52b74f3e466a731d8ad2b475c4a1dde44048a728bc54854',
        keyed: '0d926e711e82159e693d4f47bd10263a6176b35c1460e478cfda3e661b38fe52',
      },
    ],
  ];

  it.each(cases)('%s', (_, { operation, command, plain, keyed }) => {
    expect(requestHash(operation, command).toString('hex')).toBe(plain);
    expect(keyedRequestHash(keyring, operation, command)).toEqual({
      digest: Buffer.from(keyed, 'hex'),
      keyId: 'test1',
    });
  });
});

describe('derived keys', () => {
  const secret = Buffer.alloc(32, 0x33);
  const request = {
    subject: 'payment' as const,
    tenantId: '9d3c6a7e-1b2f-4c5d-8e9f-0a1b2c3d4e5f',
    lineage: 'payments.create.v1',
    clientKey: 'order-4711',
    command: { amountMinor: '1050', currency: 'EUR', paymentMethod: 'pm_card_visa' },
  };

  it('give the provider the same key for every retry of a logical request, and only for it', () => {
    const key = providerRequestKey(secret, request);
    expect(key).toMatch(/^provider_payment_[A-Za-z0-9_-]{43}$/);
    expect(providerRequestKey(secret, { ...request })).toBe(key);
    for (const other of [
      { ...request, tenantId: '9d3c6a7e-1b2f-4c5d-8e9f-0a1b2c3d4e50' },
      { ...request, lineage: 'payments.refund.v1' },
      { ...request, clientKey: 'order-4712' },
      { ...request, command: { ...request.command, amountMinor: '1051' } },
    ]) {
      expect(providerRequestKey(secret, other)).not.toBe(key);
    }
    expect(providerRequestKey(Buffer.alloc(32, 0x34), request)).not.toBe(key);
  });

  it('never carry the client’s key or the command in clear', () => {
    const key = providerRequestKey(secret, request);
    for (const part of ['order-4711', '1050', 'EUR', 'pm_card_visa', request.tenantId]) {
      expect(key).not.toContain(part);
    }
  });
});
