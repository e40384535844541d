/**
 * No lost acknowledgement: an answer a client got stays true in the database. A failover to a
 * replica that had not received the last commits, or a restore from a backup, can drop a key or
 * a payment a merchant already holds a final answer for; nothing then replays that answer, and
 * the same request runs again (a second payment, a second charge) or a follow-up meets
 * PAYMENT_NOT_FOUND for a payment the merchant was told exists. So for every answer in the
 * journal: its key is still there and finished, and the payment or operation it names exists.
 *
 * The stored answer itself is sealed (stored-answer.ts) and not in the snapshot, so "the same
 * answer" is checked through what it names; audit-answers.ts compares those names with the rows.
 */
import { OPERATION_IDS, operationLabel, type PaymentAnswer } from './audit-answers.ts';
import type { FinalRecord, Journal } from './journal.ts';
import { keysByScope, type Snapshot } from './snapshot.ts';
import type { Findings } from './verdict.ts';

export function auditAcknowledged(input: {
  journal: Journal;
  snapshot: Snapshot;
  findings: Findings;
}): void {
  const { journal, snapshot, findings } = input;
  const keys = keysByScope(snapshot.keys);
  const payments = new Set(snapshot.payments.map((p) => p.id));
  const operations = new Set(snapshot.operations.map((o) => o.id));
  for (const record of journal.records) {
    const { op } = record;
    // Every final answer was acknowledged to a client, settled or not (a copy's, a replay's).
    const first = record.finals[0];
    if (first === undefined) continue;
    let counted = false;
    const lost = (what: string) => {
      if (!counted && first.receivedAt !== undefined) {
        findings.lostAnswersReceivedAt.push(first.receivedAt);
      }
      counted = true;
      return `lost acknowledgement: ${operationLabel(op)} was answered ${told(first)}, but ${what}`;
    };
    const scope = `${snapshot.tenantIds[op.tenant]}/${OPERATION_IDS[op.kind]}/${op.key}`;
    const rows = keys.get(scope) ?? [];
    if (!findings.check('acknowledged', rows.length > 0, () => lost('its key is missing'))) {
      continue;
    }
    findings.check(
      'acknowledged',
      rows.some((row) => row.state === 'finished'),
      () => lost(`its key is ${rows.map((row) => row.state).join(', ')} again`),
    );
    for (const final of record.finals) {
      const payment = paymentOf(final);
      if (payment === undefined) continue;
      findings.check('acknowledged', payments.has(payment.id), () =>
        lost(`payment ${payment.id} it names is missing`),
      );
    }
    // A refusal names no operation; a follow-up's result names the one its key made.
    if (op.kind === 'create' || first.code !== null) continue;
    const operationId = rows[0]?.resource_id ?? null;
    findings.check('acknowledged', operationId !== null && operations.has(operationId), () =>
      lost(`the ${op.kind} operation its key names (${operationId}) is missing`),
    );
  }
}

function paymentOf(final: FinalRecord): PaymentAnswer | undefined {
  return final.data?.['payment'] as PaymentAnswer | undefined;
}

/** What the client was told, in a few words: a refusal's code, or the payment's status. */
function told(final: FinalRecord): string {
  if (final.code !== null) return final.code;
  const payment = paymentOf(final);
  return payment === undefined ? `HTTP ${final.status}` : `${payment.status} (${payment.id})`;
}
