import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { FirstPhase } from '../../lib/idempotency/engine.ts';
import { normaliseCreatePayment } from '../../services/payments/create-payment.command.ts';
import type { CreatePaymentInput } from '../../services/payments/create-payment.command.ts';
import { CREATE_PAYMENT } from '../../services/payments/create-payment.flow.ts';
import { createPaymentOn, paymentInput, useTestStack } from '../support/test-stack.ts';

/**
 * A first phase given as a function is built only when admission is about to insert the key:
 * a replay, a key in flight and a reused key never pay for what only a new request needs (a
 * payment id's random draw, the provider key's canonical form and HMAC).
 */
const stack = useTestStack('first_phase_when_free');

function admit(input: ReturnType<typeof paymentInput>) {
  const { key, command } = normaliseCreatePayment({
    ...(input as unknown as CreatePaymentInput),
    tenantId: stack.tenantIds.a,
  });
  let built = 0;
  const first = (): FirstPhase => {
    built += 1;
    return { to: 'provider_charge_sent', resourceId: randomUUID(), statements: [] };
  };
  const admission = stack.app.services.deps.engine.admit({
    scope: { tenantId: stack.tenantIds.a, operation: CREATE_PAYMENT, key },
    command,
    first,
  });
  return { admission, built: () => built };
}

describe('a first phase given as a function', () => {
  it('is built once for a new key, and never for a replay, a key in flight or a reused key', async () => {
    const fresh = admit(paymentInput('first-phase-new', { amount: '5.00' }));
    expect((await fresh.admission).kind).toBe('owned');
    expect(fresh.built()).toBe(1);

    const inFlight = admit(paymentInput('first-phase-new', { amount: '5.00' }));
    expect((await inFlight.admission).kind).toBe('in_use');
    expect(inFlight.built()).toBe(0);

    const reused = admit(paymentInput('first-phase-new', { amount: '6.00' }));
    expect((await reused.admission).kind).toBe('reused');
    expect(reused.built()).toBe(0);

    const input = paymentInput('first-phase-finished', { amount: '7.00' });
    await createPaymentOn(stack, input);
    const replay = admit(input);
    expect((await replay.admission).kind).toBe('replay');
    expect(replay.built()).toBe(0);
  });
});
