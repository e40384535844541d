/**
 * What sealing costs one request, in CPU, beside what the request does anyway: the seal and
 * open of a typical stored answer against the JSON round trip it already makes, and the keyed
 * request hash against the plain SHA-256 it replaces. Ratios and µs from one run on one machine;
 * nothing asserted (ADR 0001 quotes a run).
 *
 *   npx tsx scripts/bench-sealing.ts [--iterations 20000]
 */

import { parseArgs } from 'node:util';
import { associatedData } from '../lib/crypto/envelope.ts';
import { Keyring } from '../lib/crypto/keyring.ts';
import { keyedRequestHash, requestHash } from '../lib/idempotency/request-hash.ts';
import { CREATE_PAYMENT } from '../services/payments/create-payment.flow.ts';
import { table } from '../ops/render.ts';

/** Enough calls that timer resolution and JIT warm-up are a rounding error. */
const DEFAULT_ITERATIONS = 20_000;

const { values } = parseArgs({ options: { iterations: { type: 'string' } } });
const iterations = Number(values.iterations ?? DEFAULT_ITERATIONS);

/** A createPayment answer as stored: the payment view, a few hundred bytes of JSON. */
const ANSWER = {
  payment: {
    id: '5f0e7c1a-8d3b-4a51-9f0e-2b6c1d7e8a90',
    status: 'SUCCEEDED',
    amount: '10.00',
    currency: 'EUR',
    captureMethod: 'AUTOMATIC',
    amountCaptured: '10.00',
    amountRefunded: '0.00',
    paymentMethod: 'pm_card_visa',
    reference: 'order-2026-000123',
    providerReference: 'ch_0123456789abcdef01234567',
    failureCode: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    refunds: [],
  },
};
const COMMAND = { amountMinor: '1000', currency: 'EUR', paymentMethod: 'pm_card_visa' };
const keyring = Keyring.parse(`b1:${Buffer.alloc(32, 0x42).toString('base64')}`);
const aad = associatedData(['idempotency-response', 'tenant', 'payments.create.v1', 'key']);

function microseconds(run: () => unknown): number {
  for (let i = 0; i < 1_000; i++) run(); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) run();
  return Number(process.hrtime.bigint() - start) / 1_000 / iterations;
}

const json = microseconds(() => JSON.parse(JSON.stringify(ANSWER)) as unknown);
const sealed = microseconds(
  () =>
    JSON.parse(keyring.open(keyring.seal(JSON.stringify(ANSWER), aad), aad, 'bench')) as unknown,
);
const sha = microseconds(() => requestHash(CREATE_PAYMENT, COMMAND));
const hmac = microseconds(() => keyedRequestHash(keyring, CREATE_PAYMENT, COMMAND));

const out = table(['what', 'µs per call', 'ratio']);
out.push(['answer: JSON stringify + parse (today)', json.toFixed(2), '1.00']);
out.push([
  'answer: stringify + seal + open + parse',
  sealed.toFixed(2),
  (sealed / json).toFixed(2),
]);
out.push(['request hash: SHA-256 (before)', sha.toFixed(2), '1.00']);
out.push(['request hash: HMAC-SHA256 (keyed)', hmac.toFixed(2), (hmac / sha).toFixed(2)]);
console.log(
  `${iterations} calls each, ${Buffer.byteLength(JSON.stringify(ANSWER))} bytes of answer`,
);
console.log(out.toString());
