/**
 * What the clients were told, against each other and against the database: every operation
 * final, every answer for a key the same, answers that fit their command and their tenant,
 * and a payment's outcome that fits what its card token makes the provider do.
 */
import { paymentIdOf } from './clients.ts';
import type { Journal, OperationRecord } from './journal.ts';
import { APPROVING_TOKENS, formatMinor, type CreateOp, type PlannedOp } from './plan.ts';
import { keysByScope, type KeyRow, type Snapshot } from './snapshot.ts';
import { CHARGE_ABSENT } from './audit-provider.ts';
import type { Findings } from './verdict.ts';

export const OPERATION_IDS: Record<PlannedOp['kind'], string> = {
  create: 'payments.create.v1',
  capture: 'payments.capture.v1',
  refund: 'payments.refund.v1',
  cancel: 'payments.cancel.v1',
};

export interface PaymentAnswer {
  id: string;
  status: string;
  amount: string;
  currency: string;
  paymentMethod: string;
  captureMethod: string;
  reference: string | null;
  failureCode: string | null;
}

export function auditAnswers(input: {
  journal: Journal;
  snapshot: Snapshot;
  findings: Findings;
  providerOutages?: Array<{ from: number; to: number }>;
}): void {
  const { journal, snapshot, findings } = input;
  const outages = input.providerOutages ?? [];
  const keys = keysByScope(snapshot.keys);
  const ownerOf = new Map<string, string>(snapshot.payments.map((p) => [p.id, p.tenant_id]));
  for (const record of journal.records) {
    const { op } = record;
    const label = operationLabel(op);
    if (!checkFinal({ record, label, findings })) continue;
    checkReplays({ record, label, findings });
    const tenantId = snapshot.tenantIds[op.tenant];
    const rows = keys.get(`${tenantId}/${OPERATION_IDS[op.kind]}/${op.key}`) ?? [];
    // Unfinished rows are reported once, by the auditor's sweep of the whole table. No row at
    // all, or no payment for an answer that named one, is a lost acknowledgement: reported by
    // audit-acknowledged.ts, not as a command or tenant fault it would send a reader after.
    findings.check(
      'commands',
      rows.length <= 1,
      () => `${label}: ${rows.length} idempotency rows for its scope, expected exactly one`,
    );
    for (const final of record.finals) {
      const payment = final.data?.['payment'] as PaymentAnswer | undefined;
      const owner = payment === undefined ? undefined : ownerOf.get(payment.id);
      if (owner === undefined) continue;
      findings.check(
        'tenants',
        owner === tenantId,
        () => `${label}: answered with payment ${payment?.id}, owned by ${owner}`,
      );
    }
    if (op.kind === 'create')
      checkCreate({
        record,
        op,
        label,
        snapshot,
        findings,
        keyRow: rows[0],
        exposed: outages.some((o) => overlaps(record, o)),
      });
    else checkFollowUp({ record, label, journal, findings, keyRow: rows[0], snapshot });
  }
  checkSharedKeys(journal, findings);
}

function checkFinal(input: {
  record: OperationRecord;
  label: string;
  findings: Findings;
}): boolean {
  const { record, label, findings } = input;
  for (const answer of record.unexpected) {
    findings.add('final', `${label}: HTTP ${answer.status} ${answer.code}: ${answer.body}`);
  }
  if (record.skipped) return false; // its create has no payment: reported on the create
  return findings.check(
    'final',
    record.settled && record.finals.length > 0,
    () => `${label}: no final answer (${record.abandoned ?? 'unknown reason'})`,
  );
}

function checkReplays(input: { record: OperationRecord; label: string; findings: Findings }): void {
  const [first, ...rest] = input.record.finals;
  if (first === undefined) return;
  for (const answer of rest) {
    input.findings.check(
      'replays',
      answer.canonical === first.canonical,
      () =>
        `${input.label}: ${answer.phase} answer differs from the first final answer:\n      first: ${first.canonical}\n      later: ${answer.canonical}`,
    );
  }
}

function checkCreate(input: {
  record: OperationRecord;
  op: CreateOp;
  label: string;
  snapshot: Snapshot;
  findings: Findings;
  keyRow: KeyRow | undefined;
  /** Under way while the path to the provider misbehaved. */
  exposed: boolean;
}): void {
  const { op, label, findings, snapshot } = input;
  const payment = input.record.finals[0]?.data?.['payment'] as PaymentAnswer | undefined;
  if (payment === undefined) return;
  const sent = {
    amount: formatMinor(op.amountMinor, op.currency),
    currency: op.currency,
    paymentMethod: op.token,
    captureMethod: op.captureMethod,
    reference: op.reference,
  };
  const got = {
    amount: payment.amount,
    currency: payment.currency,
    paymentMethod: payment.paymentMethod,
    captureMethod: payment.captureMethod,
    reference: payment.reference,
  };
  findings.check(
    'commands',
    JSON.stringify(sent) === JSON.stringify(got),
    () => `${label}: sent ${JSON.stringify(sent)}, answered ${JSON.stringify(got)}`,
  );
  const tenantId = snapshot.tenantIds[op.tenant];
  const rows = snapshot.payments.filter(
    (p) => p.tenant_id === tenantId && p.reference === op.reference,
  );
  // The answered payment gone with no other in its place, or its key gone: lost acknowledgements.
  const lost = rows.length === 0 && !snapshot.payments.some((p) => p.id === payment.id);
  findings.check(
    'commands',
    lost || (rows.length === 1 && rows[0]?.id === payment.id),
    () =>
      `${label}: ${rows.length} payments with its reference (${rows.map((r) => r.id).join(', ')}), answered ${payment.id}`,
  );
  findings.check(
    'commands',
    input.keyRow === undefined || input.keyRow.resource_id === payment.id,
    () => `${label}: its key names payment ${input.keyRow?.resource_id}, the answer ${payment.id}`,
  );
  const row = rows[0];
  if (row !== undefined) {
    findings.check(
      'commands',
      (row.status === 'FAILED') === (payment.status === 'FAILED'),
      () => `${label}: answered ${payment.status}, the payment is ${row.status}`,
    );
  }
  checkTokenOutcome({ op, payment, label, findings, exposed: input.exposed });
}

/**
 * Whether an operation was under way (launched, not yet final) while the path to the provider
 * misbehaved, with the provider's apply window after it: its charge may never have arrived.
 */
function overlaps(record: OperationRecord, outage: { from: number; to: number }): boolean {
  const settledAt = record.settledAt ?? Infinity;
  return record.startedAt <= outage.to && settledAt >= outage.from;
}

/**
 * What the provider does with a token decides how the payment must end. One exception, the
 * network's: a payment under way while the path to the provider lost requests may end
 * FAILED/PROVIDER_CHARGE_ABSENT whatever its token, because its charge may never have reached
 * the provider; the provider invariants still require that no charge exists for it.
 */
function checkTokenOutcome(input: {
  op: CreateOp;
  payment: PaymentAnswer;
  label: string;
  findings: Findings;
  exposed: boolean;
}): void {
  const { op, payment, label, findings } = input;
  const outcome = `${payment.status}${payment.failureCode === null ? '' : `/${payment.failureCode}`}`;
  let expected: string;
  if (APPROVING_TOKENS.has(op.token))
    expected = op.captureMethod === 'AUTOMATIC' ? 'SUCCEEDED' : 'REQUIRES_CAPTURE';
  else if (op.token === 'pm_card_declined') expected = 'FAILED/CARD_DECLINED';
  else if (op.token === 'pm_card_unreachable') expected = `FAILED/${CHARGE_ABSENT}`;
  else expected = 'FAILED/INVALID_PAYMENT_METHOD';
  // An approving token reported as failed is an unknown outcome reported as failed.
  const invariant =
    APPROVING_TOKENS.has(op.token) || op.token === 'pm_card_unreachable' ? 'unknown' : 'commands';
  const lostOnTheWay = input.exposed && outcome === `FAILED/${CHARGE_ABSENT}`;
  findings.check(
    invariant,
    outcome === expected || lostOnTheWay,
    () => `${label}: ${op.token} (${op.captureMethod}) ended ${outcome}, expected ${expected}`,
  );
}

function checkFollowUp(input: {
  record: OperationRecord;
  label: string;
  journal: Journal;
  findings: Findings;
  keyRow: KeyRow | undefined;
  snapshot: Snapshot;
}): void {
  const { record, label, findings, snapshot } = input;
  const op = record.op;
  if (op.kind === 'create') return;
  const first = record.finals[0];
  if (first === undefined) return;
  const targetPayment = paymentIdOf(input.journal.record(op.target));
  if (op.foreign) {
    findings.check(
      'tenants',
      first.code === 'PAYMENT_NOT_FOUND',
      () =>
        `${label}: another tenant's payment ${targetPayment} answered ${first.code ?? 'with a result'}, expected PAYMENT_NOT_FOUND`,
    );
    findings.check(
      'tenants',
      record.foreignLookup === null,
      () =>
        `${label}: payment(id: ${targetPayment}) answered ${JSON.stringify(record.foreignLookup)} to the other tenant`,
    );
    return;
  }
  const opRow = snapshot.operations.find((row) => row.id === input.keyRow?.resource_id);
  if (first.code === null) {
    const payment = first.data?.['payment'] as PaymentAnswer | undefined;
    findings.check(
      'commands',
      payment?.id === targetPayment,
      () => `${label}: acted on payment ${targetPayment}, answered payment ${payment?.id}`,
    );
    // A success whose operation row is gone is a lost acknowledgement (audit-acknowledged.ts).
    if (opRow === undefined) return;
    findings.check(
      'commands',
      opRow.status === 'SUCCEEDED' && opRow.kind === op.kind,
      () => `${label}: succeeded, its operation row is ${opRow.kind} ${opRow.status}`,
    );
    if (op.kind === 'refund') {
      const refund = first.data?.['refund'] as { id?: string } | undefined;
      findings.check(
        'commands',
        refund?.id === opRow.id,
        () => `${label}: answered refund ${refund?.id}, its key names ${opRow.id}`,
      );
    }
  } else {
    findings.check(
      'commands',
      opRow === undefined || opRow.status === 'FAILED',
      () => `${label}: refused with ${first.code}, yet its operation row is ${opRow?.status}`,
    );
  }
}

/** How findings name an operation of the plan. */
export function operationLabel(op: PlannedOp): string {
  return `op ${op.index} ${op.kind} ${op.key} (tenant ${op.tenant}${'foreign' in op && op.foreign ? ', foreign' : ''})`;
}

/** One key on both tenants: two payments, each with its own tenant's command. */
function checkSharedKeys(journal: Journal, findings: Findings): void {
  for (const record of journal.records) {
    const { op } = record;
    if (op.kind !== 'create' || op.sharedKeyWith === null || op.tenant !== 'a') continue;
    const other = journal.record(op.sharedKeyWith);
    const mine = paymentIdOf(record);
    const theirs = paymentIdOf(other);
    if (mine === null || theirs === null) continue;
    findings.check(
      'tenants',
      mine !== theirs,
      () => `key ${op.key} on both tenants answered the same payment ${mine}`,
    );
  }
}
