/**
 * The books: each money movement posted once under its identity, each posting moving its money
 * the way its kind does, the merchant balance equal to what the payments say moved, one receipt
 * per captured payment, and nothing left undelivered in the outbox.
 */
import type { PostingRow, Snapshot } from './snapshot.ts';
import type { Findings } from './verdict.ts';

/** Which account each kind debits and credits: a capture credits the merchant, a refund debits it. */
const ENTRY_OF: Record<string, { debit: string; credit: string }> = {
  capture: { debit: 'psp_clearing', credit: 'merchant_balance' },
  refund: { debit: 'merchant_balance', credit: 'psp_clearing' },
};

/** What a posting moves into the merchant's balance: its amount, in or out, or nothing. */
function merchantMoved(posting: PostingRow): bigint {
  const amount = BigInt(posting.amount_minor);
  if (posting.credit_account === 'merchant_balance') return amount;
  if (posting.debit_account === 'merchant_balance') return -amount;
  return 0n;
}

export function auditLedger(snapshot: Snapshot, findings: Findings): void {
  const postings = new Map(snapshot.postings.map((p) => [`${p.tenant_id}/${p.id}`, p]));
  const expected = new Set<string>();
  const expectPosting = (input: {
    tenantId: string;
    id: string;
    kind: string;
    amountMinor: string;
    label: string;
  }) => {
    const key = `${input.tenantId}/${input.id}`;
    expected.add(key);
    const posting = postings.get(key);
    if (
      !findings.check(
        'ledger',
        posting !== undefined,
        () => `${input.label}: no posting ${input.id}`,
      )
    )
      return;
    findings.check(
      'ledger',
      posting!.kind === input.kind && posting!.amount_minor === input.amountMinor,
      () =>
        `${input.label}: posting ${input.id} is a ${posting!.kind} of ${posting!.amount_minor}, expected a ${input.kind} of ${input.amountMinor}`,
    );
  };
  for (const payment of snapshot.payments) {
    if (payment.amount_captured_minor === '0') continue;
    expectPosting({
      tenantId: payment.tenant_id,
      id: `ledger_payment_${payment.id}_capture`,
      kind: 'capture',
      amountMinor: payment.amount_captured_minor,
      label: `payment ${payment.id} captured ${payment.amount_captured_minor}`,
    });
  }
  for (const op of snapshot.operations) {
    if (op.kind !== 'refund' || op.status !== 'SUCCEEDED') continue;
    expectPosting({
      tenantId: op.tenant_id,
      id: `ledger_refund_${op.id}`,
      kind: 'refund',
      amountMinor: op.amount_minor ?? '?',
      label: `refund ${op.id}`,
    });
  }
  for (const posting of snapshot.postings) {
    const key = `${posting.tenant_id}/${posting.id}`;
    findings.check(
      'ledger',
      expected.has(key),
      () =>
        `posting ${posting.id} (${posting.kind} ${posting.amount_minor}) matches no captured payment or succeeded refund`,
    );
    const entry = ENTRY_OF[posting.kind];
    findings.check(
      'ledger',
      entry !== undefined &&
        posting.debit_account === entry.debit &&
        posting.credit_account === entry.credit,
      () =>
        `posting ${posting.id}: a ${posting.kind} debiting ${posting.debit_account} and crediting ${posting.credit_account}`,
    );
  }
  auditBalances(snapshot, findings);
  auditDelivery(snapshot, findings);
}

/** Per tenant and currency: the merchant balance is captured minus refunded. */
function auditBalances(snapshot: Snapshot, findings: Findings): void {
  const fromPayments = new Map<string, bigint>();
  for (const p of snapshot.payments) {
    const key = `${p.tenant_id}/${p.currency}`;
    const moved = BigInt(p.amount_captured_minor) - BigInt(p.amount_refunded_minor);
    fromPayments.set(key, (fromPayments.get(key) ?? 0n) + moved);
  }
  const fromLedger = new Map<string, bigint>();
  for (const p of snapshot.postings) {
    const key = `${p.tenant_id}/${p.currency}`;
    const moved = merchantMoved(p);
    fromLedger.set(key, (fromLedger.get(key) ?? 0n) + moved);
  }
  for (const key of new Set([...fromPayments.keys(), ...fromLedger.keys()])) {
    const payments = fromPayments.get(key) ?? 0n;
    const ledger = fromLedger.get(key) ?? 0n;
    findings.check(
      'ledger',
      payments === ledger,
      () => `balance ${key}: the ledger says ${ledger} minor, the payments ${payments}`,
    );
  }
}

function auditDelivery(snapshot: Snapshot, findings: Findings): void {
  for (const row of snapshot.deliveries) {
    findings.check(
      'ledger',
      row.status === 'delivered',
      () => `${row.n} outbox deliveries to ${row.consumer} are ${row.status}`,
    );
  }
  const receipts = new Map<string, number>();
  for (const r of snapshot.receipts)
    receipts.set(r.payment_id, (receipts.get(r.payment_id) ?? 0) + 1);
  for (const payment of snapshot.payments) {
    const count = receipts.get(payment.id) ?? 0;
    const want = payment.amount_captured_minor === '0' ? 0 : 1;
    findings.check(
      'ledger',
      count === want,
      () => `payment ${payment.id} (${payment.status}): ${count} receipts, expected ${want}`,
    );
  }
}
