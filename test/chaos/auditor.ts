/**
 * The auditor: after the faults healed and the engine settled, checks every invariant of the
 * run against the clients' journal, the gateway's tables and the provider's books. It never
 * relaxes a check to make a run pass: a finding is a bug in the engine or in this harness, and
 * either way it is reported with the seed that replays it.
 */
import { auditAcknowledged } from './audit-acknowledged.ts';
import { auditAnswers } from './audit-answers.ts';
import { auditLedger } from './audit-ledger.ts';
import { auditCharges, auditEffects } from './audit-provider.ts';
import { auditWebhooks } from './audit-webhooks.ts';
import type { Journal } from './journal.ts';
import type { Snapshot } from './snapshot.ts';
import { Findings } from './verdict.ts';
import type { WebhookDelivery } from './webhook-sink.ts';

export function audit(input: {
  journal: Journal;
  snapshot: Snapshot;
  webhooks: WebhookDelivery[];
  crashes: Array<{ exit: string; logFile: string }>;
  /** When the path to the provider misbehaved (FaultInjector.providerOutages). */
  providerOutages?: Array<{ from: number; to: number }>;
}): Findings {
  const { journal, snapshot } = input;
  const findings = new Findings();
  for (const crash of input.crashes) {
    findings.add('processes', `a gateway exited by itself (${crash.exit}); see ${crash.logFile}`);
  }
  const unfinished = snapshot.keys.filter((k) => k.state !== 'finished');
  for (const row of unfinished) {
    findings.add('unfinished', `${row.operation} ${row.key}: ${row.state}`);
    if (row.state === 'unknown')
      findings.add('unknown', `${row.operation} ${row.key} is still unknown`);
  }
  auditCharges(snapshot, findings);
  auditEffects(snapshot, findings);
  auditLedger(snapshot, findings);
  auditWebhooks({ snapshot, deliveries: input.webhooks, findings });
  auditAnswers({ journal, snapshot, findings, providerOutages: input.providerOutages ?? [] });
  auditAcknowledged({ journal, snapshot, findings });
  return findings;
}
