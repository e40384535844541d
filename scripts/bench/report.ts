/**
 * The bench's printed report: per concurrency, every phase of every system, the storm checks,
 * and the ratios the target is stated in: against the baselines and pgbench's rates measured in
 * the same run. Ratios only; no absolute time is asserted.
 */
import type { BenchOptions } from './args.ts';
import type { PhaseKind, PhaseResult } from './measured-phases.ts';
import type { PgbenchResult } from './pgbench.ts';
import { fixed, percentile, rate } from './stats.ts';
import { exactlyOnce, type StormOutcome } from './storm-check.ts';
import type { SystemName } from './targets.ts';
import { table } from '../../ops/render.ts';
import { DRAIN_LIMIT_SECONDS } from './outbox-backlog.ts';

/**
 * The targets the product is held to (issue 24), each a throughput ratio measured in one run:
 * phase, then numerator ÷ denominator, then the least it may be.
 */
const RATIO_TARGETS: Array<{ kind: PhaseKind; of: SystemName; to: SystemName; least: number }> = [
  { kind: 'new', of: 'product', to: 'apollo-reference', least: 0.85 },
  { kind: 'new', of: 'product', to: 'reference', least: 0.7 },
  { kind: 'replay', of: 'product', to: 'reference', least: 0.9 },
  { kind: 'storm', of: 'product', to: 'apollo-reference', least: 0.85 },
];
/** Per new payment, request path and outbox together. */
const MAX_WAL_KB = 3.5;
/** Two on the request path, and the outbox's amortised share under 0.2. */
const MAX_WRITES = 2.2;
/** The outbox's oldest pending delivery when a load ends: at most a second of traffic behind. */
const MAX_BACKLOG_SECONDS = 1;
const SYSTEMS: SystemName[] = ['product', 'apollo-reference', 'reference', 'bare'];

export interface BenchReport {
  options: BenchOptions;
  environment: string[];
  phases: PhaseResult[];
  storms: StormOutcome[];
  postgres: Array<{ concurrency: number; commit: PgbenchResult; read: PgbenchResult }>;
}

/** Per request of `phase`: NaN where it did not run. */
function perRequest(phase: PhaseResult | undefined, value: (p: PhaseResult) => number): number {
  return phase === undefined ? NaN : value(phase) / Math.max(1, phase.load.done);
}

/**
 * The phase table's columns: per request, the writing transactions of the request path and of
 * the outbox work it left, the WAL of both, and the CPU of each process during the load.
 */
const COLUMNS =
  'phase|system|per s|p50 ms|p95 ms|p99 ms|writes|outbox writes|WAL KB|CPU ms: system|PSP|PostgreSQL|load|requests';

function phaseTable(phases: PhaseResult[]): string {
  const out = table(COLUMNS.split('|'), { compact: true });
  for (const phase of phases) {
    const { load, costs } = phase;
    const sorted = [...load.latenciesMs].sort((a, b) => a - b);
    const notes = [
      load.errors > 0 ? `${load.errors} errors` : '',
      load.cutShort ? 'cut short by the time limit' : '',
      costs.otherTransactions > 0 ? '*' : '',
    ];
    const each = (value: number) => fixed(value / Math.max(1, load.done), 2);
    const walKb = (costs.walBytes + phase.outbox.walBytes) / 1024;
    out.push([
      ...[phase.kind, phase.system, fixed(rate(load), 0)],
      ...[50, 95, 99].map((p) => fixed(percentile(sorted, p), 1)),
      ...[costs.writes, phase.outbox.writes, walKb].map(each),
      ...[costs.systemMs, costs.pspMs, costs.postgresMs, costs.loadMs].map(each),
      [String(load.done), ...notes].filter(Boolean).join(' '),
    ]);
  }
  return out.toString();
}

function stormLine(storm: StormOutcome, phase: PhaseResult | undefined, copies: number): string {
  const once = exactlyOnce(storm);
  const judged =
    storm.system === 'bare'
      ? `no keys: ${copies} charges per key expected, ${once ? 'but got one' : 'and got them'}`
      : once
        ? 'one charge per key: OK'
        : 'DUPLICATE OR MISSING CHARGES';
  const answers = phase
    ? `${phase.load.done - phase.load.inUse - phase.load.errors} payments (${phase.load.replayed} replayed), ${phase.load.inUse} in use`
    : '';
  const { charges, payments } = storm;
  return `  ${storm.system.padEnd(10)} ${storm.keys} keys × ${copies}: ${answers}; charges/key ${charges.min}–${charges.max}, payment rows/key ${payments.min}–${payments.max}: ${judged}`;
}

const judge = (met: boolean) => (met ? 'met' : 'short');

/** The product's per-payment targets, from its new-keys phase. */
function perPaymentLine(phase: PhaseResult | undefined): string {
  if (phase === undefined) return '  per new payment: not run';
  const each = (value: number) => value / Math.max(1, phase.load.done);
  const walKb = each(phase.costs.walBytes + phase.outbox.walBytes) / 1024;
  const writes = each(phase.costs.writes + phase.outbox.writes);
  const lag = phase.backlog.oldestAgeSeconds;
  return `  per new payment, request path and outbox together: ${fixed(walKb, 2)} KB WAL (target ≤ ${MAX_WAL_KB}: ${judge(walKb <= MAX_WAL_KB)}); ${fixed(writes, 2)} writing transactions (target ≤ ${MAX_WRITES}: ${judge(writes <= MAX_WRITES)}); oldest pending delivery when the load ended ${fixed(lag, 1)} s (target ≤ ${MAX_BACKLOG_SECONDS}: ${judge(lag <= MAX_BACKLOG_SECONDS)})`;
}

/** The product's outbox after a phase: what the load left pending, and what draining it cost. */
function outboxLine(kind: PhaseKind, phase: PhaseResult | undefined): string {
  if (phase === undefined) return `  outbox after ${kind}: not run`;
  const { pending, oldestAgeSeconds, drainMs, drained } = phase.backlog;
  const perPayment = (value: number) => fixed(value / Math.max(1, phase.load.done), 2);
  const drain = drained ? `drained in ${fixed(drainMs / 1000, 1)} s` : `NOT DRAINED in ${DRAIN_LIMIT_SECONDS} s`;
  return `  outbox after ${kind}: at most ${pending} deliveries pending when the load ended (oldest ${fixed(oldestAgeSeconds, 1)} s), ${drain}; draining cost per payment ${perPayment(phase.outbox.writes)} writing transactions, ${perPayment(phase.outbox.postgresMs)} ms PostgreSQL CPU, ${perPayment(phase.outbox.walBytes / 1024)} KB WAL`;
}

function ratioLines(report: BenchReport, c: number): string[] {
  const pick = (system: SystemName, kind: PhaseKind) =>
    report.phases.find((p) => p.system === system && p.kind === kind && p.concurrency === c);
  const throughput = (system: SystemName, kind: PhaseKind) => {
    const phase = pick(system, kind);
    return phase === undefined ? NaN : rate(phase.load);
  };
  /** `system value` for each system that ran the phase. */
  const each = (digits: number, value: (system: SystemName) => number) =>
    SYSTEMS.filter((s) => Number.isFinite(value(s)))
      .map((s) => `${s} ${fixed(value(s), digits)}`)
      .join(', ');
  const ratio = (kind: PhaseKind, a: SystemName, b: SystemName) => {
    const value = throughput(a, kind) / throughput(b, kind);
    const target = RATIO_TARGETS.find((t) => t.kind === kind && t.of === a && t.to === b);
    const verdict =
      target === undefined ? '' : ` (target ≥ ${target.least}: ${judge(value >= target.least)})`;
    return `${a} ÷ ${b} ${fixed(value, 2)}${verdict}`;
  };
  // On cores shared with other work, throughput swings with whatever else runs; the CPU a
  // request costs each process swings much less. reference CPU ÷ product CPU is the throughput
  // ratio the two would show on cores of their own, if both were CPU-bound.
  const cpu = (kind: PhaseKind) => (system: SystemName) =>
    perRequest(pick(system, kind), (p) => p.costs.systemMs + p.costs.pspMs + p.costs.postgresMs);
  const cpuLine = (kind: PhaseKind) =>
    `CPU ms per request (system + PSP + PostgreSQL): ${each(2, cpu(kind))} → reference ÷ product ${fixed(cpu(kind)('reference') / cpu(kind)('product'), 2)}`;
  const writes = (s: SystemName) => perRequest(pick(s, 'replay'), (p) => p.costs.writes);
  const lines = [
    `  new keys: ${ratio('new', 'product', 'apollo-reference')}; ${ratio('new', 'product', 'reference')}; ${ratio('new', 'product', 'bare')}; ${ratio('new', 'apollo-reference', 'reference')}; ${ratio('new', 'reference', 'bare')}`,
    `  replays:  ${ratio('replay', 'product', 'apollo-reference')}; ${ratio('replay', 'product', 'reference')}; writing transactions per replay: ${each(2, writes)}`,
    `  storms:   ${ratio('storm', 'product', 'apollo-reference')}; ${ratio('storm', 'product', 'reference')}`,
    `  new keys ${cpuLine('new')}`,
    `  replays  ${cpuLine('replay')}`,
    ...(['new', 'storm'] as const).map((kind) => outboxLine(kind, pick('product', kind))),
    perPaymentLine(pick('product', 'new')),
  ];
  const pg = report.postgres.find((p) => p.concurrency === c);
  if (pg !== undefined) {
    lines.push(
      `  new keys ÷ PostgreSQL commit rate: ${each(3, (s) => throughput(s, 'new') / pg.commit.tps)} (ceiling at 2 writing transactions: 0.5)`,
      `  replays ÷ PostgreSQL indexed-read rate: ${each(3, (s) => throughput(s, 'replay') / pg.read.tps)}`,
      `  pgbench, ${pg.commit.connections} connections: single-row INSERT commits ${fixed(pg.commit.tps, 0)} /s (mean ${fixed(pg.commit.latencyMs, 2)} ms); indexed reads ${fixed(pg.read.tps, 0)} /s (mean ${fixed(pg.read.latencyMs, 2)} ms)`,
    );
  }
  return lines;
}

export function printReport(report: BenchReport): void {
  const out: string[] = ['', ...report.environment, ''];
  for (const c of report.options.concurrencies) {
    const phases = report.phases.filter((p) => p.concurrency === c);
    out.push(`concurrency ${c}: per request, CPU ms of each process and writing transactions`);
    out.push(phaseTable(phases), 'storm check (charges on the PSP statement, by reference):');
    for (const storm of report.storms.filter((s) => s.concurrency === c)) {
      const phase = phases.find((p) => p.system === storm.system && p.kind === 'storm');
      out.push(stormLine(storm, phase, report.options.stormCopies));
    }
    out.push('ratios (throughput):', ...ratioLines(report, c), '');
  }
  if (report.phases.some((p) => p.costs.otherTransactions > 0)) {
    out.push(
      '* other databases ran transactions meanwhile: "writes" (server-wide ids) may be high',
    );
  }
  console.log(out.join('\n'));
}

/** Whether the run showed a correctness failure: errors, or duplicate charges behind a key. */
export function failures(report: BenchReport): string[] {
  const problems = report.phases
    .filter((p) => p.load.errors > 0)
    .map(
      (p) =>
        `${p.system} ${p.kind} c${p.concurrency}: ${p.load.errors} errors, e.g. ${p.load.errorSamples.join(' | ')}`,
    );
  for (const storm of report.storms.filter((s) => s.system !== 'bare' && !exactlyOnce(s))) {
    const { min, max } = storm.charges;
    problems.push(`${storm.system} storm c${storm.concurrency}: charges per key ${min}–${max}`);
  }
  return problems;
}
