/**
 * A retry after the database lost what an acknowledged request wrote: a failover with
 * asynchronous replication, or a restore from a backup taken before the request. The rows are
 * deleted here as such an event loses them (the key's rows, the payment, its operation); the
 * client then retries with its key. Provider keys derive from the logical request
 * (services/payments/provider-keys.ts), so the retry presents the key the provider already
 * knows: one charge, one refund, whatever was lost.
 */
import { describe, expect, it } from 'vitest';
import { errorCodeOf, graphql, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { CREATE_PAYMENT, REFUND_PAYMENT } from '../support/operations.ts';
import { TENANT_A, useTestStack } from '../support/test-stack.ts';

const stack = useTestStack('lost-rows');

let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}-${Date.now().toString(36)}`;

const send = (query: string, input: Record<string, unknown>): Promise<GraphQLAnswer> =>
  graphql(stack.app.url, { apiKey: TENANT_A.apiKey, query, variables: { input } });

/** What a lost commit loses: the key of the request and everything it wrote. */
async function loseRequest(key: string, resource: { payment?: string; operation?: string }) {
  const { rows } = await stack.db.query<{ id: string }>(
    'SELECT id FROM idempotency_keys WHERE tenant_id = $1 AND key = $2',
    [stack.tenantIds.a, key],
  );
  const ids = rows.map((r) => r.id);
  expect(ids).toHaveLength(1);
  await stack.db.query('DELETE FROM idempotency_responses WHERE request_id = ANY($1)', [ids]);
  await stack.db.query('DELETE FROM idempotency_phase_log WHERE request_id = ANY($1)', [ids]);
  await stack.db.query('DELETE FROM idempotency_keys WHERE id = ANY($1)', [ids]);
  if (resource.operation !== undefined)
    await stack.db.query('DELETE FROM payment_operations WHERE id = $1', [resource.operation]);
  if (resource.payment !== undefined)
    await stack.db.query('DELETE FROM payments WHERE id = $1', [resource.payment]);
}

describe('a retry after the rows of an acknowledged request were lost', () => {
  it('charges once: the retry presents the provider key of the first attempt', async () => {
    const input = {
      idempotencyKey: unique('lost-create'),
      amount: '12.00',
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
      reference: unique('ref'),
    };
    const first = paymentOf(await send(CREATE_PAYMENT, input));
    expect(first.status).toBe('SUCCEEDED');
    await loseRequest(input.idempotencyKey, { payment: first.id });

    const retry = paymentOf(await send(CREATE_PAYMENT, input));
    // A new payment row (the first is gone), carrying the provider's first and only charge.
    expect(retry).toMatchObject({ status: 'SUCCEEDED', amount: '12.00' });
    expect(stack.sandbox.charges({ reference: input.reference })).toHaveLength(1);
  });

  it('refunds once: the retry of a lost refund presents the first refund’s key', async () => {
    const reference = unique('ref');
    const payment = paymentOf(
      await send(CREATE_PAYMENT, {
        idempotencyKey: unique('lost-refund-create'),
        amount: '20.00',
        currency: 'EUR',
        paymentMethod: 'pm_card_visa',
        reference,
      }),
    );
    const refund = { idempotencyKey: unique('lost-refund'), paymentId: payment.id, amount: '5.00' };
    const first = await send(REFUND_PAYMENT, refund);
    expect(first.status).toBe(200);
    const { rows } = await stack.db.query<{ id: string }>(
      `SELECT id FROM payment_operations WHERE payment_id = $1 AND kind = 'refund'`,
      [payment.id],
    );
    await loseRequest(refund.idempotencyKey, { operation: rows[0]!.id });
    // The payment's own refunded amount was lost with the refund's commit, as a restore would.
    await stack.db.query(`UPDATE payments SET amount_refunded_minor = 0 WHERE id = $1`, [
      payment.id,
    ]);

    const retry = await send(REFUND_PAYMENT, refund);
    expect(retry.status).toBe(200);
    const [charge] = stack.sandbox.charges({ reference });
    expect(charge?.amountRefunded).toBe('5.00');
  });

  it('answers REQUEST_ALREADY_APPLIED, naming the payment, when only the key was lost', async () => {
    const input = {
      idempotencyKey: unique('lost-key'),
      amount: '7.00',
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
      reference: unique('ref'),
    };
    const first = paymentOf(await send(CREATE_PAYMENT, input));
    // The key expired (or was lost) while the payment stays, as payments always do.
    await loseRequest(input.idempotencyKey, {});
    const retry = await send(CREATE_PAYMENT, input);
    expect(retry.status).toBe(409);
    expect(errorCodeOf(retry)).toBe('REQUEST_ALREADY_APPLIED');
    expect(retry.body.errors?.[0]?.extensions?.['paymentId']).toBe(first.id);
    expect(stack.sandbox.charges({ reference: input.reference })).toHaveLength(1);
  });

  it('treats the same request after its replay window as new, and a lost row of that one too', async () => {
    const input = {
      idempotencyKey: unique('past-window'),
      amount: '9.00',
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
      reference: unique('ref'),
    };
    const first = paymentOf(await send(CREATE_PAYMENT, input));
    // The first generation's window is over and its key gone; its payment stays, as payments do.
    await loseRequest(input.idempotencyKey, {});
    await stack.db.query(
      `UPDATE payments SET created_at = now() - interval '2 days' WHERE id = $1`,
      [first.id],
    );
    const second = paymentOf(await send(CREATE_PAYMENT, input));
    expect(second.id).not.toBe(first.id);
    expect(stack.sandbox.charges({ reference: input.reference })).toHaveLength(2);
    // The second generation's rows are lost: its retry finds the provider's second charge.
    await loseRequest(input.idempotencyKey, { payment: second.id });
    const third = paymentOf(await send(CREATE_PAYMENT, input));
    expect(third.status).toBe('SUCCEEDED');
    expect(stack.sandbox.charges({ reference: input.reference })).toHaveLength(2);
  });

  it('answers a refund whose key alone was lost REQUEST_ALREADY_APPLIED, refunding nothing more', async () => {
    const reference = unique('ref');
    const payment = paymentOf(
      await send(CREATE_PAYMENT, {
        idempotencyKey: unique('lost-refund-key-create'),
        amount: '30.00',
        currency: 'EUR',
        paymentMethod: 'pm_card_visa',
        reference,
      }),
    );
    const refund = {
      idempotencyKey: unique('lost-refund-key'),
      paymentId: payment.id,
      amount: '4.00',
    };
    expect((await send(REFUND_PAYMENT, refund)).status).toBe(200);
    await loseRequest(refund.idempotencyKey, {});
    const retry = await send(REFUND_PAYMENT, refund);
    expect(retry.status).toBe(409);
    expect(errorCodeOf(retry)).toBe('REQUEST_ALREADY_APPLIED');
    expect(retry.body.errors?.[0]?.extensions?.['paymentId']).toBe(payment.id);
    expect(stack.sandbox.charges({ reference })[0]?.amountRefunded).toBe('4.00');
  });
});
