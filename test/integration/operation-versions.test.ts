import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Admission } from '../../lib/idempotency/engine.ts';
import { defineOperation } from '../../lib/idempotency/operation.ts';
import {
  normaliseCreatePayment,
  type CreatePaymentInput,
} from '../../services/payments/create-payment.command.ts';
import { CREATE_PAYMENT } from '../../services/payments/create-payment.flow.ts';
import { paymentOf } from '../support/graphql-client.ts';
import { countRows, createPaymentOn, paymentInput, useTestStack } from '../support/test-stack.ts';

/**
 * A version bump of an operation (payments.create.v1 → v2, because its command changed) while
 * keys admitted under v1 are still within their window. Their retries reach code that admits
 * under v2: they must find their v1 row (a replay, an in-use answer, a takeover that writes under
 * v1), never be admitted again as a second payment. The v2 here is the test's own.
 */
const stack = useTestStack('operation_versions');

const CREATE_PAYMENT_V2 = defineOperation({
  ...CREATE_PAYMENT,
  id: 'payments.create.v2',
  otherVersionIds: [CREATE_PAYMENT.id],
});
/** The first step of rolling the bump out: v1 code that reads v2's keys, and writes v1. */
const CREATE_PAYMENT_V1_READING_V2 = defineOperation({
  ...CREATE_PAYMENT,
  otherVersionIds: ['payments.create.v2'],
});

/** The command `input` stands for, normalised as createPayment does. */
function commandOf(input: Record<string, unknown>) {
  return normaliseCreatePayment({
    ...(input as unknown as CreatePaymentInput),
    tenantId: stack.tenantIds.a,
  });
}

/** Admits the command of `input` as v2 code would, with an empty first phase. */
function admitAsV2(input: ReturnType<typeof paymentInput>): Promise<Admission> {
  return admitAs(CREATE_PAYMENT_V2, input);
}

function admitAs(
  operation: typeof CREATE_PAYMENT,
  input: ReturnType<typeof paymentInput>,
): Promise<Admission> {
  const { key, command } = commandOf(input);
  return stack.app.services.deps.engine.admit({
    scope: { tenantId: stack.tenantIds.a, operation, key },
    command,
    first: { to: 'provider_charge_sent', resourceId: randomUUID(), statements: [] },
  });
}

async function keyRows(key: string) {
  const { rows } = await stack.db.query<{ operation: string; state: string }>(
    `SELECT operation, state FROM idempotency_keys WHERE key = $1 ORDER BY created_at`,
    [key],
  );
  return rows;
}

describe('a key admitted before a version bump', () => {
  it('is replayed by the new version, not admitted again', async () => {
    const input = paymentInput('bump-finished', { amount: '12.00' });
    const first = paymentOf(await createPaymentOn(stack, input));
    const payments = await countRows(stack.db, 'payments');

    const admission = await admitAsV2(input);
    expect(admission.kind).toBe('replay');
    if (admission.kind !== 'replay') return;
    expect(admission.answer.body).toMatchObject({ payment: { id: first.id } });
    expect(await keyRows('bump-finished')).toEqual([
      { operation: 'payments.create.v1', state: 'finished' },
    ]);
    expect(await countRows(stack.db, 'payments')).toBe(payments);
    expect(stack.sandbox.charges({ reference: 'bump-finished' })).toHaveLength(1);
  });

  it('is refused, not replayed, when its command no longer hashes alike', async () => {
    const input = paymentInput('bump-other', { amount: '3.00' });
    paymentOf(await createPaymentOn(stack, input));
    expect((await admitAsV2({ ...input, amount: '4.00' })).kind).toBe('reused');
    expect(await keyRows('bump-other')).toHaveLength(1);
  });

  it('is in use while its v1 owner holds it, then taken over and finished under its v1 id', async () => {
    stack.app.faults.arm('createPayment.provider_charge.before-call', { kind: 'throw' });
    const input = paymentInput('bump-in-flight', { amount: '8.00' });
    try {
      await createPaymentOn(stack, input);
    } finally {
      stack.app.faults.disarm('createPayment.provider_charge.before-call');
    }
    expect((await admitAsV2(input)).kind).toBe('in_use');

    await stack.db.query(
      `UPDATE idempotency_keys SET lease_expires_at = now() - interval '1 second' WHERE key = $1`,
      ['bump-in-flight'],
    );
    const taken = await admitAsV2(input);
    expect(taken).toMatchObject({ kind: 'owned', via: 'takeover' });
    if (taken.kind !== 'owned') return;
    expect(taken.request.admittedAs).toBe('payments.create.v1');
    await taken.request.finish({ payment: { marker: 'finished by v2 code' } }, []);

    expect(await keyRows('bump-in-flight')).toEqual([
      { operation: 'payments.create.v1', state: 'finished' },
    ]);
    // Sealed to the v1 id it was admitted under: v1 code opens it (and so does v2's).
    const replayedByV1 = await stack.app.services.deps.engine.admit({
      scope: {
        tenantId: stack.tenantIds.a,
        operation: CREATE_PAYMENT,
        key: 'bump-in-flight',
      },
      command: commandOf(input).command,
      first: { to: 'provider_charge_sent', resourceId: randomUUID(), statements: [] },
    });
    expect(replayedByV1).toMatchObject({
      kind: 'replay',
      answer: { body: { payment: { marker: 'finished by v2 code' } } },
    });
  });

  it('admits a new key once when processes on either side of the bump race for it', async () => {
    for (let i = 0; i < 10; i++) {
      const input = paymentInput(`bump-race-${i}`, { amount: '2.00' });
      const answers = await Promise.all([
        admitAs(CREATE_PAYMENT_V1_READING_V2, input),
        admitAsV2(input),
      ]);
      expect(
        answers.filter((a) => a.kind === 'owned'),
        `race ${i}`,
      ).toHaveLength(1);
      expect(await keyRows(`bump-race-${i}`)).toHaveLength(1);
    }
  });

  it('v1 code rolled out first finds keys v2 code finished, and writes its own under v1', async () => {
    const input = paymentInput('bump-v2-first', { amount: '5.00' });
    const admitted = await admitAsV2(input);
    if (admitted.kind !== 'owned') throw new Error(`expected owned, got ${admitted.kind}`);
    await admitted.request.finish({ payment: { marker: 'v2' } }, []);
    expect(await admitAs(CREATE_PAYMENT_V1_READING_V2, input)).toMatchObject({
      kind: 'replay',
      answer: { body: { payment: { marker: 'v2' } } },
    });

    const fresh = paymentInput('bump-v1-reader-new', { amount: '5.00' });
    expect((await admitAs(CREATE_PAYMENT_V1_READING_V2, fresh)).kind).toBe('owned');
    expect((await admitAsV2(fresh)).kind).toBe('in_use');
    expect(await keyRows('bump-v1-reader-new')).toEqual([
      { operation: 'payments.create.v1', state: 'started' },
    ]);
  });
});

describe('defineOperation', () => {
  it('refuses another version id that is not another version of the same operation', () => {
    const base = { ...CREATE_PAYMENT, id: 'payments.create.v2' };
    expect(() => defineOperation({ ...base, otherVersionIds: ['payments.refund.v1'] })).toThrow(
      /not another version/,
    );
    expect(() => defineOperation({ ...base, otherVersionIds: ['payments.create.v2'] })).toThrow(
      /not another version/,
    );
  });
});
