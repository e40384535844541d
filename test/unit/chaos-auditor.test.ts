import { describe, expect, it } from 'vitest';
import { audit } from '../chaos/auditor.ts';
import type { Invariant, Violation } from '../chaos/verdict.ts';
import { resultAnswer } from './chaos-client-answers.fixture.ts';
import {
  cleanRun,
  providerChargeKey,
  uuid,
  type FinishedRun,
} from './chaos-finished-run.fixture.ts';

/**
 * The chaos auditor can fail. A soak run that reports "all invariants hold" means something only
 * if each invariant's check turns red on the violation it exists for; these tests start from a
 * small finished run whose journal, tables, provider books and webhooks agree, plant one
 * violation each in a fresh copy, and expect the auditor to name that invariant and nothing
 * unrelated.
 */

function violationsOf(run: FinishedRun): Violation[] {
  return audit(run).violations;
}

/** Every violation is of `invariant`, and one of them says `detail`. */
function expectOnly(violations: Violation[], invariant: Invariant, detail: RegExp): void {
  expect(violations.filter((v) => v.invariant !== invariant)).toEqual([]);
  expect(violations.map((v) => v.detail)).toContainEqual(expect.stringMatching(detail));
}

/**
 * A restore to a point before the payment was made: every gateway row about it is gone (its
 * keys, the payment, its operations, postings, receipts, events); what lives outside the
 * database stays: the clients' journal, the provider's books, the webhooks received.
 */
function forgetPayment(run: FinishedRun, paymentId: string): void {
  const { snapshot } = run;
  const gone = new Set([
    paymentId,
    ...snapshot.operations.filter((o) => o.payment_id === paymentId).map((o) => o.id),
  ]);
  snapshot.keys = snapshot.keys.filter((k) => k.resource_id === null || !gone.has(k.resource_id));
  snapshot.payments = snapshot.payments.filter((p) => p.id !== paymentId);
  snapshot.operations = snapshot.operations.filter((o) => o.payment_id !== paymentId);
  snapshot.postings = snapshot.postings.filter((p) => p.payment_id !== paymentId);
  snapshot.receipts = snapshot.receipts.filter((r) => r.payment_id !== paymentId);
  snapshot.events = snapshot.events.filter((e) => ![...gone].some((id) => e.id.includes(id)));
}

describe('the chaos auditor, on a finished run', () => {
  it('finds nothing where everything agrees (the control for every planted violation)', () => {
    const { builder } = cleanRun();
    const run = builder.finish();
    expect(run.journal.records.map((r) => r.op.kind)).toEqual([
      'create',
      'create',
      'capture',
      'refund',
      'refund',
      'create',
      'create',
    ]);
    expect(
      run.journal.records.filter((r) => r.finals.some((f) => f.phase === 'replay')),
    ).toHaveLength(2);
    expect(violationsOf(run)).toEqual([]);
  });

  it.each([
    {
      how: 'under a key of its own (a retry that derived a new provider key)',
      key: providerChargeKey(uuid(777)),
      detail: /charge ch_dup .*reference chaos-7-0.* belongs to no payment/,
    },
    {
      how: 'under the payment’s own key (a provider that did not deduplicate)',
      key: undefined,
      detail: /2 successful of 2 charges at the provider, expected exactly 1/,
    },
  ])('reports a second provider charge for one payment, $how', ({ key, detail }) => {
    const { builder, payments } = cleanRun();
    const run = builder.finish();
    const charge = payments.automatic.charge;
    run.snapshot.charges.push({
      ...charge,
      id: 'ch_dup',
      amountRefunded: '0.00',
      idempotencyKey: key ?? charge.idempotencyKey,
    });
    expectOnly(violationsOf(run), 'charges', detail);
  });

  it('reports refunds that exceed what was captured', () => {
    const { builder, payments } = cleanRun();
    // The refused refund's twin goes through: 400 + 700 refunded of 1000 captured, and every
    // trace of it (provider refund, ledger, event, answer) agrees with the over-refund.
    builder.refund({ target: payments.automatic, amountMinor: 700 });
    const violations = violationsOf(builder.finish());
    expectOnly(violations, 'effects', /refunded 1100 of 1000 captured/);
    expect(violations).toHaveLength(1);
  });

  it('reports a ledger posting that moves money the wrong way', () => {
    const { builder, payments } = cleanRun();
    const run = builder.finish();
    const posting = run.snapshot.postings.find((p) => p.payment_id === payments.manual.row.id);
    if (posting === undefined) throw new Error('the capture has no posting');
    // A capture posted as a refund would: the merchant's balance goes down by it.
    [posting.debit_account, posting.credit_account] = [
      posting.credit_account,
      posting.debit_account,
    ];
    const violations = violationsOf(run);
    expectOnly(
      violations,
      'ledger',
      /a capture debiting merchant_balance and crediting psp_clearing/,
    );
    expectOnly(violations, 'ledger', /balance .*: the ledger says/);
  });

  it('reports a replay whose answer changed', () => {
    const { builder, payments } = cleanRun();
    const run = builder.finish();
    // The replay read the payment as it is now (refunded since) instead of the stored answer.
    const { op } = payments.automatic;
    const record = run.journal.record(op.index);
    expect(record.finals.map((f) => f.phase)).toEqual(['first', 'replay']);
    const payload = { payment: builder.view(payments.automatic) };
    record.finals[1] = resultAnswer({ op, payload, send: 1 });
    expectOnly(violationsOf(run), 'replays', /replay answer differs from the first final answer/);
  });

  it('reports an event never delivered (its redelivery after a refused first one lost)', () => {
    const { builder, payments } = cleanRun();
    const run = builder.finish();
    const eventId = `evt_payment_${payments.manual.row.id}_captured`;
    const deliveries = run.webhooks.filter((d) => d.id === eventId);
    expect(deliveries.map((d) => d.answered)).toEqual([503, 204]);
    run.webhooks = run.webhooks.filter((d) => d.id !== eventId || d.answered >= 300);
    expectOnly(
      violationsOf(run),
      'webhooks',
      /never delivered to its tenant's endpoint \(1 refused\)/,
    );
  });

  it('reports an event applied twice (a second receipt for one capture)', () => {
    const { builder, payments } = cleanRun();
    const run = builder.finish();
    const { row } = payments.automatic;
    run.snapshot.receipts.push({ tenant_id: row.tenant_id, payment_id: row.id });
    expectOnly(violationsOf(run), 'ledger', /2 receipts, expected 1/);
  });

  describe('a payment FAILED/PROVIDER_CHARGE_ABSENT for an approving token', () => {
    /**
     * A clean run plus a pm_card_visa payment whose charge never reached the provider: failed
     * by reconciliation, no charge for it anywhere; its client launched it at 1000 ms and had
     * its final answer at 2000 ms.
     */
    function chargeAbsentRun(): { run: FinishedRun; label: string } {
      const { builder } = cleanRun();
      const { op } = builder.createChargeAbsent({
        tenant: 'a',
        amountMinor: 1500,
        currency: 'EUR',
        token: 'pm_card_visa',
        captureMethod: 'AUTOMATIC',
      });
      const run = builder.finish();
      const record = run.journal.record(op.index);
      record.startedAt = 1_000;
      record.settledAt = 2_000;
      return { run, label: `op ${op.index} create ${op.key} (tenant a)` };
    }

    it('reports it as an unknown outcome reported as failed, with no outage while under way', () => {
      const { run, label } = chargeAbsentRun();
      // Outages that end just before it started and begin just after its answer.
      const providerOutages = [
        { from: 200, to: 999 },
        { from: 2_001, to: 3_000 },
      ];
      expect(audit({ ...run, providerOutages }).violations).toEqual([
        {
          invariant: 'unknown',
          detail: `${label}: pm_card_visa (AUTOMATIC) ended FAILED/PROVIDER_CHARGE_ABSENT, expected SUCCEEDED`,
        },
      ]);
    });

    it('accepts it when the path to the provider misbehaved while it was under way', () => {
      const { run } = chargeAbsentRun();
      const providerOutages = [{ from: 1_800, to: 2_500 }];
      expect(audit({ ...run, providerOutages }).violations).toEqual([]);
    });
  });

  describe('reports a lost acknowledgement', () => {
    it('a succeeded payment gone after a restore, its charge and webhook still out there', () => {
      const { builder, payments } = cleanRun();
      const run = builder.finish();
      const { id } = payments.plain.row;
      forgetPayment(run, id);
      const violations = violationsOf(run);
      expect(violations.filter((v) => v.invariant === 'acknowledged')).toEqual([
        {
          invariant: 'acknowledged',
          detail: `lost acknowledgement: op 6 create c-7-6 (tenant b) was answered SUCCEEDED (${id}), but its key is missing`,
        },
      ]);
      // The rest is the evidence outside the database, each naming the lost payment.
      const rest = violations.filter((v) => v.invariant !== 'acknowledged');
      expect(rest.map((v) => v.invariant).sort()).toEqual(['charges', 'webhooks']);
      for (const v of rest) expect(v.detail).toContain(id);
    });

    it('a payment with a capture gone after a restore: both answers lost', () => {
      const { builder, payments } = cleanRun();
      const run = builder.finish();
      forgetPayment(run, payments.manual.row.id);
      const lost = violationsOf(run).filter((v) => v.invariant === 'acknowledged');
      expect(lost.map((v) => v.detail)).toEqual([
        expect.stringMatching(/^lost acknowledgement: op 1 create .* its key is missing$/),
        expect.stringMatching(/^lost acknowledgement: op 2 capture .* its key is missing$/),
      ]);
    });

    it('a payment row gone while its key stays (a clean-up that took the wrong rows)', () => {
      const { builder, payments } = cleanRun();
      const run = builder.finish();
      const { id } = payments.declined.row;
      run.snapshot.payments = run.snapshot.payments.filter((p) => p.id !== id);
      const violations = violationsOf(run);
      expect(violations.filter((v) => v.invariant === 'acknowledged')).toEqual([
        {
          invariant: 'acknowledged',
          detail: `lost acknowledgement: op 5 create c-7-5 (tenant b) was answered FAILED (${id}), but payment ${id} it names is missing`,
        },
      ]);
      // Not a tenant leak nor a wrong command: the rest is the payment's other traces.
      const rest = violations.filter((v) => v.invariant !== 'acknowledged');
      expect(rest.map((v) => v.invariant).sort()).toEqual(['charges', 'webhooks']);
      for (const v of rest) expect(v.detail).toContain(id);
    });

    it('a key back to started (a failover to a replica that missed its last commit)', () => {
      const { builder, payments } = cleanRun();
      const run = builder.finish();
      const key = run.snapshot.keys.find((k) => k.resource_id === payments.manual.row.id);
      if (key === undefined) throw new Error('the create has no key');
      key.state = 'started';
      const violations = violationsOf(run);
      expect(violations.map((v) => v.invariant).sort()).toEqual(['acknowledged', 'unfinished']);
      expect(violations.find((v) => v.invariant === 'acknowledged')?.detail).toMatch(
        /op 1 create .* was answered REQUIRES_CAPTURE .*, but its key is started again/,
      );
    });

    it('a definitive refusal whose key is gone', () => {
      const { builder } = cleanRun();
      const run = builder.finish();
      const refused = run.journal.records.find((r) => r.finals[0]?.code !== null);
      run.snapshot.keys = run.snapshot.keys.filter((k) => k.key !== refused?.op.key);
      expectOnly(
        violationsOf(run),
        'acknowledged',
        /^lost acknowledgement: op 4 refund .* was answered AMOUNT_EXCEEDS_REFUNDABLE, but its key is missing$/,
      );
    });

    it('the operation an acknowledged capture’s key names, gone', () => {
      const { builder, payments } = cleanRun();
      const run = builder.finish();
      const { id } = payments.manual.row;
      run.snapshot.operations = run.snapshot.operations.filter((o) => o.payment_id !== id);
      expectOnly(
        violationsOf(run),
        'acknowledged',
        /^lost acknowledgement: op 2 capture .* but the capture operation its key names \(.+\) is missing$/,
      );
    });
  });
});
