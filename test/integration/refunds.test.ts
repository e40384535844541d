import { describe, expect, it } from 'vitest';
import { errorCodeOf, graphql, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { createPaymentOn, paymentInput, TENANT_A, useTestStack } from '../support/test-stack.ts';
import { refundPayment } from '../support/operations.ts';

/**
 * refundPayment: partial and several per payment, replays identical with one provider effect,
 * refusals stored and replayed, and — whatever the interleaving of concurrent refunds under
 * different keys — never more refunded than captured, at home or at the provider.
 */
const stack = useTestStack('refunds', { app: { poolMax: 20 } });

function refund(input: Record<string, unknown>): Promise<GraphQLAnswer> {
  return refundPayment({ url: stack.app.url, apiKey: TENANT_A.apiKey }, input);
}
interface Refunded {
  refund: { id: string; amount: string; status: string; reason: string | null };
  payment: {
    amountRefunded: string;
    refunds: Array<{ id: string; amount: string; status: string }>;
  };
  idempotency: { replayed: boolean };
}
const refunded = (answer: GraphQLAnswer) => {
  const value = answer.body.data?.['refundPayment'];
  if (!value) throw new Error(JSON.stringify(answer.body));
  return value as Refunded;
};

let serial = 0;
async function captured(amount: string): Promise<{ id: string; chargeId: string }> {
  serial += 1;
  const payment = paymentOf(
    await createPaymentOn(stack, paymentInput(`paid-${serial}`, { amount })),
  );
  expect(payment.status).toBe('SUCCEEDED');
  return { id: payment.id, chargeId: payment.providerReference! };
}
const appliedRefunds = (chargeId: string) =>
  stack.sandbox.operations({ chargeId }).filter((o) => o.kind === 'refund' && o.applied).length;

describe('refundPayment', () => {
  it('refunds in parts; each replay is identical and calls the provider no more; too much is refused and stored', async () => {
    const { id, chargeId } = await captured('10.00');
    const first = refunded(
      await refund({ idempotencyKey: 'ref-1', paymentId: id, amount: '4', reason: 'damaged' }),
    );
    expect(first.refund).toMatchObject({ amount: '4.00', status: 'SUCCEEDED', reason: 'damaged' });
    expect(first.payment.amountRefunded).toBe('4.00');
    const again = refunded(
      await refund({ idempotencyKey: 'ref-1', paymentId: id, amount: '4.00', reason: 'damaged' }),
    );
    expect(again).toEqual({ ...first, idempotency: { replayed: true } });
    const second = refunded(
      await refund({ idempotencyKey: 'ref-2', paymentId: id, amount: '6.00' }),
    );
    expect(second.payment.amountRefunded).toBe('10.00');
    expect(second.payment.refunds.map((r) => r.amount)).toEqual(['4.00', '6.00']);
    expect(appliedRefunds(chargeId)).toBe(2);

    const over = await refund({ idempotencyKey: 'ref-3', paymentId: id, amount: '0.01' });
    expect([errorCodeOf(over), over.status]).toEqual(['AMOUNT_EXCEEDS_REFUNDABLE', 422]);
    const overAgain = await refund({ idempotencyKey: 'ref-3', paymentId: id, amount: '0.01' });
    expect([errorCodeOf(overAgain), overAgain.body.extensions]).toEqual([
      'AMOUNT_EXCEEDS_REFUNDABLE',
      { idempotency: { replayed: true } },
    ]);
    expect(appliedRefunds(chargeId)).toBe(2);

    const shown = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: `query($id: ID!) { payment(id: $id) { amountRefunded refunds { amount status } } }`,
      variables: { id },
    });
    expect(shown.body.data).toEqual({
      payment: {
        amountRefunded: '10.00',
        refunds: [
          { amount: '4.00', status: 'SUCCEEDED' },
          { amount: '6.00', status: 'SUCCEEDED' },
        ],
      },
    });
  });

  it('refuses payments that captured nothing: authorised only, declined', async () => {
    const manual = paymentOf(
      await createPaymentOn(stack, paymentInput('ref-manual', { captureMethod: 'MANUAL' })),
    );
    const declined = paymentOf(
      await createPaymentOn(
        stack,
        paymentInput('ref-declined', { paymentMethod: 'pm_card_declined' }),
      ),
    );
    for (const payment of [manual, declined]) {
      expect(
        errorCodeOf(
          await refund({
            idempotencyKey: `ref-state-${payment.id}`,
            paymentId: payment.id,
            amount: '1.00',
          }),
        ),
      ).toBe('INVALID_PAYMENT_STATE');
    }
  });
});

/** Small seeded generator (mulberry32), so a failing interleaving can be replayed by its seed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe('concurrent refunds under different keys', () => {
  const seed = Number(process.env['REFUND_PROPERTY_SEED'] ?? 20261130);
  it(`never refund more than was captured, in any interleaving (seed ${seed})`, async () => {
    const random = seeded(seed);
    for (let round = 0; round < 6; round++) {
      const { id, chargeId } = await captured('10.00');
      const amounts = Array.from({ length: 12 }, () => (50 + Math.floor(random() * 250)) / 100); // 0.50–2.99
      const answers = await Promise.all(
        amounts.map((amount, i) =>
          refund({
            idempotencyKey: `prop-${seed}-${round}-${i}`,
            paymentId: id,
            amount: amount.toFixed(2),
          }),
        ),
      );
      let succeededCents = 0;
      for (const [i, answer] of answers.entries()) {
        if (answer.status === 200) succeededCents += Math.round(amounts[i]! * 100);
        else
          expect(errorCodeOf(answer), `seed ${seed} round ${round}`).toBe(
            'AMOUNT_EXCEEDS_REFUNDABLE',
          );
      }
      expect(succeededCents, `seed ${seed} round ${round}`).toBeLessThanOrEqual(1000);
      const { rows } = await stack.db.query<{ amount_refunded_minor: string }>(
        'SELECT amount_refunded_minor FROM payments WHERE id = $1',
        [id],
      );
      expect(Number(rows[0]?.amount_refunded_minor)).toBe(succeededCents);
      const refundsAtProvider = stack.sandbox.refunds({ chargeId });
      expect(
        refundsAtProvider.reduce((sum, r) => sum + Math.round(Number(r.amount) * 100), 0),
      ).toBe(succeededCents);
      expect(appliedRefunds(chargeId)).toBe(answers.filter((a) => a.status === 200).length);
      // Our own rule decided every refusal: not one refund was sent that the provider had to refuse.
      const refusedAtProvider = stack.sandbox
        .operations({ chargeId })
        .filter((o) => o.kind === 'refund' && !o.applied);
      expect(refusedAtProvider, `seed ${seed} round ${round}`).toEqual([]);
    }
  });
});
