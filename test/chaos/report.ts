/**
 * The run's output: what was done (operations by kind and final outcome, faults, retries,
 * replays, reconciliations, timings) and the auditor's verdict per invariant, with the
 * violations themselves and the seed that replays the run.
 */
import Table from 'cli-table3';
import { reportTable } from '../../ops/render.ts';
import type { FailoverCost, FaultCounts } from './faults.ts';
import type { Journal, OperationRecord } from './journal.ts';
import type { SettleReport } from './settle.ts';
import type { Snapshot } from './snapshot.ts';
import type { Tier } from './tiers.ts';
import { INVARIANTS, type Findings, type Invariant } from './verdict.ts';

/** Violations printed per invariant; the count says how many there were in all. */
const MAX_SHOWN_PER_INVARIANT = 12;

export interface RunFigures {
  seed: number;
  tier: Tier;
  journal: Journal;
  faults: FaultCounts;
  settle: SettleReport;
  snapshot: Snapshot;
  timings: { loadMs: number; settleMs: number; auditMs: number; totalMs: number };
  /** Gateway processes started, and the time they took in all. */
  starts: { count: number; ms: number };
}

export function outcomeOf(record: OperationRecord): string {
  if (record.skipped) return 'not sent (no payment)';
  const first = record.finals[0];
  if (first === undefined) return record.unexpected[0]?.code ?? 'NO FINAL ANSWER';
  if (first.code !== null) return first.code;
  const payment = first.data?.['payment'] as { status?: string; failureCode?: string | null };
  if (record.op.kind !== 'create') return 'SUCCEEDED';
  return `${payment.status ?? '?'}${payment.failureCode ? `/${payment.failureCode}` : ''}`;
}

function kindOf(record: OperationRecord): string {
  const { op } = record;
  if (op.kind === 'create')
    return `createPayment ${op.captureMethod === 'MANUAL' ? 'MANUAL' : 'AUTO'}`;
  return `${op.kind}Payment${op.foreign ? ' (foreign)' : ''}`;
}

export function outcomesTable(journal: Journal): string {
  const counts = new Map<string, Map<string, number>>();
  for (const record of journal.records) {
    const kind = kindOf(record);
    const byOutcome = counts.get(kind) ?? new Map<string, number>();
    const outcome = outcomeOf(record);
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
    counts.set(kind, byOutcome);
  }
  const table = new Table({
    head: ['operation', 'final outcome', 'count'],
    style: { head: [], border: [] },
  });
  for (const [kind, byOutcome] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
    for (const [outcome, n] of [...byOutcome].sort(([, a], [, b]) => b - a)) {
      table.push([kind, outcome, String(n)]);
    }
  }
  return table.toString();
}

export function figuresTable(run: RunFigures): string {
  const { stats } = run.journal;
  const interventions = (action: string) =>
    run.snapshot.interventions.find((i) => i.action === action)?.n ?? 0;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return reportTable([
    ['seed', run.seed],
    ['tier', run.tier.name],
    ['logical operations', `${run.journal.records.length} (${stats.settled} final)`],
    ['HTTP requests', stats.requests],
    ['retries', stats.retries],
    ['replays received (replayed: true)', stats.replays],
    ['OUTCOME_PENDING seen', stats.outcomePending],
    ['IDEMPOTENCY_KEY_IN_USE seen', stats.inUse],
    ['PROVIDER_UNAVAILABLE seen', stats.providerUnavailable],
    ['DATABASE_UNAVAILABLE seen', stats.databaseUnavailable],
    ['SERVICE_UNAVAILABLE seen', stats.serviceUnavailable],
    ['INTERNAL_SERVER_ERROR seen', stats.internalErrors],
    ['client timeouts / connection errors', `${stats.timeouts} / ${stats.networkErrors}`],
    ['waits with no gateway up', stats.noGateway],
    ['gateway SIGKILLs (restarts)', `${run.faults.sigkill} (${run.faults.restarts})`],
    [
      'SIGKILLs aimed at a start: landed in it',
      `${run.faults.aimedAtStart}: ${run.faults.killedWhileStarting}`,
    ],
    [
      'gateway start time, mean',
      `${(run.starts.ms / Math.max(1, run.starts.count) / 1000).toFixed(1)} s over ${run.starts.count} starts`,
    ],
    ['gateway SIGSTOPs', run.faults.sigstop],
    [
      'PostgreSQL backend kills (sessions ended)',
      `${run.faults.backendKill} (${run.faults.backendsTerminated})`,
    ],
    ['network episodes (database, provider and hop paths)', run.faults.network],
    ...(run.tier.formation
      ? [
          [
            'primary crashes / switchovers / standby stalls',
            `${run.faults.primaryKills} / ${run.faults.switchovers} / ${run.faults.standbyStalls}`,
          ] as [string, string],
        ]
      : []),
    ...(run.tier.split
      ? [
          ['service process SIGKILLs (restarted)', String(run.faults.serviceKills)] as [
            string,
            string,
          ],
        ]
      : []),
    [
      'reconciliations: charge found / absent',
      `${interventions('reconciled_charge_found')} / ${interventions('reconciled_charge_absent')}`,
    ],
    [
      'reconcile calls after the load',
      `${run.settle.reconcileCalls} (settled ${run.settle.settledByCall})`,
    ],
    [
      'provider charges / refunds',
      `${run.snapshot.charges.length} / ${run.snapshot.refunds.length}`,
    ],
    [
      'duration: load / settle / audit / total',
      `${seconds(run.timings.loadMs)} / ${seconds(run.timings.settleMs)} / ${seconds(run.timings.auditMs)} / ${seconds(run.timings.totalMs)}`,
    ],
  ]);
}

export function verdictTable(findings: Findings): string {
  const table = new Table({
    head: ['invariant', 'verdict', 'violations'],
    style: { head: [], border: [] },
  });
  for (const [name, text] of Object.entries(INVARIANTS) as Array<[Invariant, string]>) {
    const count = findings.of(name).length;
    table.push([text, count === 0 ? 'PASS' : 'FAIL', String(count)]);
  }
  return table.toString();
}

export function violationList(findings: Findings): string {
  const lines: string[] = [];
  for (const [name, text] of Object.entries(INVARIANTS) as Array<[Invariant, string]>) {
    const violations = findings.of(name);
    if (violations.length === 0) continue;
    lines.push(`\n✗ ${text} (${violations.length})`);
    for (const v of violations.slice(0, MAX_SHOWN_PER_INVARIANT)) lines.push(`  - ${v.detail}`);
    if (violations.length > MAX_SHOWN_PER_INVARIANT) {
      lines.push(`  … and ${violations.length - MAX_SHOWN_PER_INVARIANT} more`);
    }
  }
  return lines.join('\n');
}

/**
 * The last lines of a failed run, which are all CI shows of it: each broken invariant's name,
 * how many violations it had and the first of them, so the failure reads without the rest of
 * the output.
 */
export function failureSummary(findings: Findings): string[] {
  const lines: string[] = [];
  for (const name of Object.keys(INVARIANTS) as Invariant[]) {
    const violations = findings.of(name);
    if (violations.length === 0) continue;
    lines.push(`  ✗ ${name} (${violations.length}): ${violations[0]!.detail.slice(0, 300)}`);
  }
  return lines;
}

/** What each failover cost the merchant: time without a successful payment, and the answers meanwhile. */
export function failoverTable(failovers: FailoverCost[]): string {
  const table = new Table({
    head: [
      'failover',
      'node',
      'longest time without a payment',
      'OUTCOME_PENDING',
      'PROVIDER_UNAVAILABLE',
      'DATABASE_UNAVAILABLE',
      '500',
      'IN_USE',
      'network errors',
      'timeouts',
    ],
    style: { head: [], border: [] },
  });
  for (const f of failovers) {
    table.push([
      f.kind,
      f.node,
      f.outageMs === null ? 'no payment at all' : `${(f.outageMs / 1000).toFixed(1)} s`,
      f.answers.outcomePending,
      f.answers.providerUnavailable,
      f.answers.databaseUnavailable,
      f.answers.internalErrors,
      f.answers.inUse,
      f.answers.networkErrors,
      f.answers.timeouts,
    ]);
  }
  return `failovers: ${failovers.length}\n${table.toString()}`;
}
