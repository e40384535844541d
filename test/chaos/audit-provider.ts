/**
 * The gateway's payments and operations against the provider's books. The provider is the
 * ground truth for money: whatever the gateway answered, the charge and refunds that exist at
 * the provider are what happened.
 */
import type { Snapshot } from './snapshot.ts';
import { minorOf, type Findings } from './verdict.ts';

/** The charge status at the provider that each final payment status requires. */
const CHARGE_STATUS: Record<string, string> = {
  SUCCEEDED: 'captured',
  REQUIRES_CAPTURE: 'authorized',
  CANCELED: 'voided',
};
/** Failures the provider itself decided: a declined charge exists, nothing succeeded. */
const PROVIDER_DECLINES = new Set(['CARD_DECLINED', 'INVALID_PAYMENT_METHOD']);
export const CHARGE_ABSENT = 'PROVIDER_CHARGE_ABSENT';

export function auditCharges(snapshot: Snapshot, findings: Findings): void {
  const chargesByKey = new Map<string, Snapshot['charges']>();
  for (const charge of snapshot.charges) {
    const list = chargesByKey.get(charge.idempotencyKey) ?? [];
    list.push(charge);
    chargesByKey.set(charge.idempotencyKey, list);
  }
  const paymentKeys = new Set(snapshot.payments.map((p) => p.provider_key));
  for (const charge of snapshot.charges) {
    findings.check(
      'charges',
      paymentKeys.has(charge.idempotencyKey),
      () =>
        `charge ${charge.id} (key ${charge.idempotencyKey}, reference ${charge.reference}) belongs to no payment`,
    );
  }
  for (const payment of snapshot.payments) {
    const charges = chargesByKey.get(payment.provider_key) ?? [];
    const label = `payment ${payment.id} (${payment.reference}, ${payment.payment_method}, ${payment.status}${payment.failure_code ? `/${payment.failure_code}` : ''})`;
    const successful = charges.filter((c) => c.status !== 'declined');
    const expectedStatus = CHARGE_STATUS[payment.status];
    if (expectedStatus !== undefined) {
      if (
        !findings.check(
          'charges',
          successful.length === 1 && charges.length === 1,
          () =>
            `${label}: ${successful.length} successful of ${charges.length} charges at the provider, expected exactly 1`,
        )
      )
        continue;
      const charge = successful[0]!;
      const money = (amount: string) => minorOf(amount, payment.currency).toString();
      findings.check(
        'charges',
        charge.status === expectedStatus,
        () =>
          `${label}: the provider's charge ${charge.id} is ${charge.status}, expected ${expectedStatus}`,
      );
      findings.check(
        'charges',
        money(charge.amount) === payment.amount_minor,
        () => `${label}: charged ${charge.amount} for an amount of ${payment.amount_minor} minor`,
      );
      findings.check(
        'charges',
        money(charge.amountCaptured) === payment.amount_captured_minor,
        () =>
          `${label}: provider captured ${charge.amountCaptured}, gateway says ${payment.amount_captured_minor} minor`,
      );
      findings.check(
        'charges',
        money(charge.amountRefunded) === payment.amount_refunded_minor,
        () =>
          `${label}: provider refunded ${charge.amountRefunded}, gateway says ${payment.amount_refunded_minor} minor`,
      );
      findings.check(
        'charges',
        payment.provider_reference === charge.id,
        () =>
          `${label}: provider reference ${payment.provider_reference}, the provider's charge is ${charge.id}`,
      );
    } else if (payment.status === 'FAILED' && PROVIDER_DECLINES.has(payment.failure_code ?? '')) {
      findings.check(
        'charges',
        successful.length === 0 && charges.length === 1,
        () =>
          `${label}: ${successful.length} successful of ${charges.length} charges, expected one declined`,
      );
    } else if (payment.status === 'FAILED' && payment.failure_code === CHARGE_ABSENT) {
      // Reconciliation said the provider's final books prove there is no charge: check it.
      findings.check(
        'unknown',
        charges.length === 0,
        () =>
          `${label}: settled as absent, but the provider has charge ${charges.map((c) => `${c.id} (${c.status})`).join(', ')}`,
      );
    } else {
      findings.add('charges', `${label}: not a final payment state`);
    }
  }
}

export function auditEffects(snapshot: Snapshot, findings: Findings): void {
  const charges = new Map(snapshot.charges.map((c) => [c.id, c]));
  const payments = new Map(snapshot.payments.map((p) => [p.id, p]));
  const refundsByKey = new Map<string, Snapshot['refunds']>();
  for (const refund of snapshot.refunds) {
    refundsByKey.set(refund.idempotencyKey, [
      ...(refundsByKey.get(refund.idempotencyKey) ?? []),
      refund,
    ]);
  }
  const refundOps = new Map(
    snapshot.operations.filter((op) => op.kind === 'refund').map((op) => [op.provider_key, op]),
  );
  for (const refund of snapshot.refunds) {
    const op = refundOps.get(refund.idempotencyKey);
    findings.check(
      'effects',
      op?.status === 'SUCCEEDED',
      () =>
        `provider refund ${refund.id} (${refund.amount}, key ${refund.idempotencyKey}) has no succeeded refund operation (${op?.status ?? 'none'})`,
    );
  }
  const settlements = new Map<string, number>();
  const refundedByPayment = new Map<string, bigint>();
  for (const op of snapshot.operations) {
    const payment = payments.get(op.payment_id);
    const label = `${op.kind} ${op.id} on payment ${op.payment_id}`;
    if (payment === undefined) {
      findings.add('effects', `${label}: the payment does not exist`);
      continue;
    }
    const charge =
      payment.provider_reference === null ? undefined : charges.get(payment.provider_reference);
    findings.check(
      'effects',
      op.status === 'SUCCEEDED' || op.status === 'FAILED',
      () => `${label}: left ${op.status}`,
    );
    const refunds = refundsByKey.get(op.provider_key) ?? [];
    if (op.kind === 'refund') {
      if (op.status === 'SUCCEEDED') {
        refundedByPayment.set(
          op.payment_id,
          (refundedByPayment.get(op.payment_id) ?? 0n) + BigInt(op.amount_minor ?? '0'),
        );
        findings.check(
          'effects',
          refunds.length === 1,
          () => `${label}: succeeded, ${refunds.length} refunds at the provider under its key`,
        );
        const refund = refunds[0];
        if (refund !== undefined) {
          findings.check(
            'effects',
            minorOf(refund.amount, payment.currency).toString() === op.amount_minor,
            () =>
              `${label}: refunded ${refund.amount} at the provider, ${op.amount_minor} minor in the gateway`,
          );
        }
      } else {
        findings.check(
          'effects',
          refunds.length === 0,
          () =>
            `${label}: ${op.status}, yet ${refunds.length} refunds at the provider under its key`,
        );
      }
      continue;
    }
    if (op.status !== 'SUCCEEDED') continue;
    settlements.set(op.payment_id, (settlements.get(op.payment_id) ?? 0) + 1);
    const expected = op.kind === 'capture' ? 'captured' : 'voided';
    findings.check(
      'effects',
      charge?.status === expected,
      () => `${label}: succeeded, but the provider's charge is ${charge?.status ?? 'missing'}`,
    );
    if (op.kind === 'capture' && charge !== undefined) {
      findings.check(
        'effects',
        minorOf(charge.amountCaptured, payment.currency).toString() === op.amount_minor,
        () =>
          `${label}: captured ${op.amount_minor} minor, the provider captured ${charge.amountCaptured}`,
      );
    }
  }
  for (const [paymentId, count] of settlements) {
    findings.check(
      'effects',
      count === 1,
      () => `payment ${paymentId}: ${count} captures/cancels succeeded, at most one may`,
    );
  }
  for (const payment of snapshot.payments) {
    const refunded = refundedByPayment.get(payment.id) ?? 0n;
    findings.check(
      'effects',
      refunded.toString() === payment.amount_refunded_minor,
      () =>
        `payment ${payment.id}: refunds succeeded for ${refunded} minor, amount_refunded is ${payment.amount_refunded_minor}`,
    );
    findings.check(
      'effects',
      BigInt(payment.amount_refunded_minor) <= BigInt(payment.amount_captured_minor),
      () =>
        `payment ${payment.id}: refunded ${payment.amount_refunded_minor} of ${payment.amount_captured_minor} captured`,
    );
  }
}
