import { describe, expect, it } from 'vitest';
import { errorCodeOf, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import {
  createPaymentOn,
  paymentInput,
  TENANT_A,
  TENANT_B,
  useTestStack,
} from '../support/test-stack.ts';
import { cancelPayment, capturePayment } from '../support/operations.ts';

/**
 * capturePayment and cancelPayment: each with its own key scope, derived provider key and
 * phases; replays identical with one provider effect; business-rule refusals stored for the key
 * and replayed with the same code; a capture racing a cancel has exactly one winner.
 */
const stack = useTestStack('capture-cancel');

function capture(input: Record<string, unknown>, apiKey = TENANT_A.apiKey): Promise<GraphQLAnswer> {
  return capturePayment({ url: stack.app.url, apiKey }, input);
}
function cancel(input: Record<string, unknown>, apiKey = TENANT_A.apiKey): Promise<GraphQLAnswer> {
  return cancelPayment({ url: stack.app.url, apiKey }, input);
}
function resultOf(
  answer: GraphQLAnswer,
  field: string,
): { payment: Record<string, unknown>; idempotency: { replayed: boolean } } {
  const value = answer.body.data?.[field];
  if (!value) throw new Error(`no ${field}: ${JSON.stringify(answer.body)}`);
  return value as { payment: Record<string, unknown>; idempotency: { replayed: boolean } };
}

let serial = 0;
async function authorised(
  amount = '10.00',
  paymentMethod = 'pm_card_visa',
): Promise<{ id: string; chargeId: string }> {
  serial += 1;
  const created = await createPaymentOn(
    stack,
    paymentInput(`auth-${serial}`, { amount, paymentMethod, captureMethod: 'MANUAL' }),
  );
  const payment = paymentOf(created);
  expect(payment.status).toBe('REQUIRES_CAPTURE');
  return { id: payment.id, chargeId: payment.providerReference! };
}

const applied = (chargeId: string, kind: 'capture' | 'void') =>
  stack.sandbox.operations({ chargeId }).filter((o) => o.kind === kind && o.applied).length;

describe('capturePayment', () => {
  it('captures part of the authorisation once; a replay is identical and calls the provider no more', async () => {
    const { id, chargeId } = await authorised('10.00');
    const input = { idempotencyKey: 'cap-1', paymentId: id, amount: '7.5' };
    const first = resultOf(await capture(input), 'capturePayment');
    expect(first.payment).toMatchObject({
      id,
      status: 'SUCCEEDED',
      amount: '10.00',
      amountCaptured: '7.50',
    });
    const attempts = stack.sandbox.operations({ chargeId }).length;
    const again = await capture({ ...input, amount: '7.50' }); // equivalent amount: same command
    expect(resultOf(again, 'capturePayment')).toEqual({
      ...first,
      idempotency: { ...first.idempotency, replayed: true },
    });
    expect(again.body.extensions).toEqual({ idempotency: { replayed: true } });
    expect(stack.sandbox.operations({ chargeId })).toHaveLength(attempts);
    expect(applied(chargeId, 'capture')).toBe(1);
  });

  it('stores its refusals for the key and replays them: a second capture, too much, no such payment', async () => {
    const { id, chargeId } = await authorised('10.00');
    expect(
      resultOf(await capture({ idempotencyKey: 'cap-2a', paymentId: id }), 'capturePayment').payment
        .amountCaptured,
    ).toBe('10.00');
    for (const [input, code, status] of [
      [{ idempotencyKey: 'cap-2b', paymentId: id }, 'INVALID_PAYMENT_STATE', 422],
      [
        { idempotencyKey: 'cap-2c', paymentId: (await authorised('5.00')).id, amount: '5.01' },
        'AMOUNT_EXCEEDS_CAPTURABLE',
        422,
      ],
      [
        { idempotencyKey: 'cap-2d', paymentId: '00000000-0000-4000-8000-000000000000' },
        'PAYMENT_NOT_FOUND',
        404,
      ],
      [{ idempotencyKey: 'cap-2e', paymentId: 'not-a-payment-id' }, 'PAYMENT_NOT_FOUND', 404],
    ] as const) {
      const refused = await capture(input);
      expect([errorCodeOf(refused), refused.status]).toEqual([code, status]);
      const replayed = await capture(input);
      expect([errorCodeOf(replayed), replayed.status]).toEqual([code, status]);
      expect(replayed.body.extensions).toEqual({ idempotency: { replayed: true } });
      const { rows } = await stack.db.query(`SELECT state FROM idempotency_keys WHERE key = $1`, [
        input.idempotencyKey,
      ]);
      expect(rows).toEqual([{ state: 'finished' }]);
    }
    expect(applied(chargeId, 'capture')).toBe(1);
  });

  it('refuses another tenant’s payment as not found', async () => {
    const { id } = await authorised();
    const answer = await capture({ idempotencyKey: 'cap-3', paymentId: id }, TENANT_B.apiKey);
    expect(errorCodeOf(answer)).toBe('PAYMENT_NOT_FOUND');
  });

  it('refuses an automatic payment, already captured, as INVALID_PAYMENT_STATE', async () => {
    const payment = paymentOf(await createPaymentOn(stack, paymentInput('auto-1')));
    expect(errorCodeOf(await capture({ idempotencyKey: 'cap-4', paymentId: payment.id }))).toBe(
      'INVALID_PAYMENT_STATE',
    );
  });

  it('does not store a malformed amount: the same key may be used again, correctly', async () => {
    const { id } = await authorised('10.00');
    const bad = await capture({ idempotencyKey: 'cap-5', paymentId: id, amount: '1.234' });
    expect([errorCodeOf(bad), bad.status]).toEqual(['BAD_USER_INPUT', 400]);
    const { rows } = await stack.db.query(`SELECT 1 FROM idempotency_keys WHERE key = 'cap-5'`);
    expect(rows).toEqual([]);
  });
});

describe('cancelPayment', () => {
  it('voids an authorisation once; a capture afterwards is refused; replays are identical', async () => {
    const { id, chargeId } = await authorised();
    const input = { idempotencyKey: 'can-1', paymentId: id };
    const first = resultOf(await cancel(input), 'cancelPayment');
    expect(first.payment).toMatchObject({ id, status: 'CANCELED', amountCaptured: '0.00' });
    expect(resultOf(await cancel(input), 'cancelPayment').idempotency.replayed).toBe(true);
    expect(applied(chargeId, 'void')).toBe(1);
    expect(errorCodeOf(await capture({ idempotencyKey: 'can-1-cap', paymentId: id }))).toBe(
      'INVALID_PAYMENT_STATE',
    );
    expect(applied(chargeId, 'capture')).toBe(0);
  });
});

describe('a capture racing a cancel with different keys', () => {
  it('has exactly one winner, every time, and the provider applies exactly one of them', async () => {
    for (let round = 0; round < 8; round++) {
      const { id, chargeId } = await authorised();
      const [captured, canceled] = await Promise.all([
        capture({ idempotencyKey: `race-cap-${round}`, paymentId: id }),
        cancel({ idempotencyKey: `race-can-${round}`, paymentId: id }),
      ]);
      const winners = [captured.status === 200, canceled.status === 200].filter(Boolean).length;
      expect(winners).toBe(1);
      const loser = captured.status === 200 ? canceled : captured;
      expect(errorCodeOf(loser)).toBe('INVALID_PAYMENT_STATE');
      expect(applied(chargeId, 'capture') + applied(chargeId, 'void')).toBe(1);
      const { rows } = await stack.db.query<{ status: string }>(
        'SELECT status FROM payments WHERE id = $1',
        [id],
      );
      expect(rows[0]?.status).toBe(captured.status === 200 ? 'SUCCEEDED' : 'CANCELED');
    }
  });
});

describe('transient provider failures on a capture', () => {
  it('a 503 is retried, never stored; the capture is applied once', async () => {
    const { id, chargeId } = await authorised('3.00', 'pm_card_unavailable');
    const answer = await capture({ idempotencyKey: 'cap-503', paymentId: id });
    expect(resultOf(answer, 'capturePayment').payment.status).toBe('SUCCEEDED');
    const attempts = stack.sandbox.operations({ chargeId }).filter((o) => o.kind === 'capture');
    expect(attempts.filter((o) => !o.applied).length).toBeGreaterThanOrEqual(1); // the 503
    expect(applied(chargeId, 'capture')).toBe(1);
  });
});
