/**
 * The bench's printed report: per concurrency, every phase of every system, the storm checks,
 * and the ratios the target is stated in: against the baselines and pgbench's rates measured in
 * the same run. Ratios only; no absolute time is asserted.
 */
import type { BenchOptions } from './args.ts';
import type { PhaseKind, PhaseResult } from './measured-phase.ts';
import type { PgbenchResult } from './pgbench.ts';
import { fixed, percentile, rate } from './stats.ts';
import { exactlyOnce, type StormOutcome } from './storm-check.ts';
import type { SystemName } from './targets.ts';

/** The target: the product at this fraction of the hand-written reference, or more. */
export const TARGET_RATIO = 0.8;

export interface PostgresRates {
  concurrency: number;
  commit: PgbenchResult;
  read: PgbenchResult;
}

export interface BenchReport {
  options: BenchOptions;
  environment: string[];
  phases: PhaseResult[];
  storms: StormOutcome[];
  postgres: PostgresRates[];
}

const PHASE_TITLE: Record<PhaseKind, string> = {
  new: 'new keys',
  replay: 'replays',
  storm: 'storm',
};

function latency(latenciesMs: number[]): string {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const at = (p: number) => fixed(percentile(sorted, p), 1).padStart(7);
  return `p50 ${at(50)} ms  p95 ${at(95)} ms  p99 ${at(99)} ms`;
}

const SYSTEM_ORDER: SystemName[] = ['product', 'reference', 'bare'];

function phaseRow(phase: PhaseResult): string {
  const { load, costs } = phase;
  const label = phase.system === 'product' ? PHASE_TITLE[phase.kind] : `  ${phase.system}`;
  const n = Math.max(1, load.done);
  const perRequest = (ms: number) => fixed(ms / n, 2).padStart(6);
  const flags = [
    load.errors > 0 ? `${load.errors} errors` : '',
    load.cutShort ? 'cut short by the time limit' : '',
    costs.otherTransactions > 0 ? '*' : '',
  ].filter(Boolean);
  return [
    label.padEnd(12),
    `${fixed(rate(load), 0).padStart(7)} /s`,
    latency(load.latenciesMs),
    fixed(costs.writes / n, 2).padStart(6),
    `${perRequest(costs.systemMs)} ${perRequest(costs.pspMs)} ${perRequest(costs.postgresMs)} ${perRequest(costs.loadMs)}`,
    `${flags.join(', ')} (${load.done})`,
  ].join('  ');
}

const HEADER = [
  ''.padEnd(12),
  'throughput'.padStart(10),
  '  latency'.padEnd(45),
  'writes',
  '  CPU ms per request: system psp postgres load',
].join('  ');

const perRequest = (phase: PhaseResult | undefined, value: (p: PhaseResult) => number) =>
  phase === undefined ? NaN : value(phase) / Math.max(1, phase.load.done);

function find(report: BenchReport, spec: { system: SystemName; kind: PhaseKind; c: number }) {
  return report.phases.find(
    (p) => p.system === spec.system && p.kind === spec.kind && p.concurrency === spec.c,
  );
}

function ratio(a: PhaseResult | undefined, b: PhaseResult | PgbenchResult | undefined) {
  if (a === undefined || b === undefined) return NaN;
  return rate(a.load) / ('load' in b ? rate(b.load) : b.tps);
}

/** CPU per request of the serving side: the system, the PSP and PostgreSQL (not the load). */
function serverCpu(phase: PhaseResult | undefined): number {
  if (phase === undefined) return NaN;
  const { systemMs, pspMs, postgresMs } = phase.costs;
  return (systemMs + pspMs + postgresMs) / Math.max(1, phase.load.done);
}

/**
 * On two cores shared with other work, throughput swings with whatever else runs; the CPU a
 * request costs each process swings much less. reference CPU ÷ product CPU is the throughput
 * ratio the two would show on cores of their own, if both were CPU-bound.
 */
function cpuLine(report: BenchReport, spec: { c: number; kind: PhaseKind }): string {
  const at = (system: SystemName) => find(report, { system, kind: spec.kind, c: spec.c });
  const [product, reference, bare] = SYSTEM_ORDER.map((system) => serverCpu(at(system)));
  const label = spec.kind === 'new' ? 'new keys' : 'replays ';
  const ratio = (reference ?? NaN) / (product ?? NaN);
  const bareText = Number.isFinite(bare) ? `, bare ${fixed(bare ?? NaN, 2)}` : '';
  return `  ${label} CPU per request (system + PSP + PostgreSQL): product ${fixed(product ?? NaN, 2)} ms, reference ${fixed(reference ?? NaN, 2)} ms${bareText} → reference ÷ product ${fixed(ratio, 2)}`;
}

function verdict(value: number): string {
  if (!Number.isFinite(value)) return '';
  return value >= TARGET_RATIO
    ? `(target ≥ ${TARGET_RATIO}: met)`
    : `(target ≥ ${TARGET_RATIO}: short)`;
}

function stormLines(report: BenchReport, c: number): string[] {
  const { stormCopies } = report.options;
  return report.storms
    .filter((s) => s.concurrency === c)
    .map((count) => {
      const { system } = count;
      const phase = find(report, { system, kind: 'storm', c });
      const charges = `${count.charges.min}–${count.charges.max}`;
      const payments = `${count.payments.min}–${count.payments.max}`;
      const once = exactlyOnce(count);
      const judged =
        system === 'bare'
          ? `no keys: ${stormCopies} charges per key expected, ${once ? 'but got one' : 'and got them'}`
          : once
            ? 'one charge per key: OK'
            : 'DUPLICATE OR MISSING CHARGES';
      const answers = phase
        ? `${phase.load.done - phase.load.inUse - phase.load.errors} payments (${phase.load.replayed} replayed), ${phase.load.inUse} in use`
        : '';
      return `  ${system.padEnd(10)} ${count.keys} keys × ${stormCopies}: ${answers}; charges/key ${charges}, payment rows/key ${payments}: ${judged}`;
    });
}

function ratioLines(report: BenchReport, c: number): string[] {
  const pick = (system: SystemName, kind: PhaseKind) => find(report, { system, kind, c });
  const pg = report.postgres.find((p) => p.concurrency === c);
  const newRef = ratio(pick('product', 'new'), pick('reference', 'new'));
  const replayRef = ratio(pick('product', 'replay'), pick('reference', 'replay'));
  const lines = [
    `  new keys: product ÷ reference ${fixed(newRef, 2)} ${verdict(newRef)}; product ÷ bare ${fixed(ratio(pick('product', 'new'), pick('bare', 'new')), 2)}; reference ÷ bare ${fixed(ratio(pick('reference', 'new'), pick('bare', 'new')), 2)}`,
    `  replays:  product ÷ reference ${fixed(replayRef, 2)} ${verdict(replayRef)}; writing transactions per replay: product ${fixed(
      perRequest(pick('product', 'replay'), (p) => p.costs.writes),
      2,
    )}, reference ${fixed(
      perRequest(pick('reference', 'replay'), (p) => p.costs.writes),
      2,
    )}`,
  ];
  lines.push(cpuLine(report, { c, kind: 'new' }), cpuLine(report, { c, kind: 'replay' }));
  if (pg !== undefined) {
    lines.push(
      `  new keys ÷ PostgreSQL commit rate: product ${fixed(ratio(pick('product', 'new'), pg.commit), 3)}, reference ${fixed(ratio(pick('reference', 'new'), pg.commit), 3)}, bare ${fixed(ratio(pick('bare', 'new'), pg.commit), 3)} (ceiling at 2 writing transactions: 0.5)`,
      `  replays ÷ PostgreSQL indexed-read rate: product ${fixed(ratio(pick('product', 'replay'), pg.read), 3)}, reference ${fixed(ratio(pick('reference', 'replay'), pg.read), 3)}`,
      `  pgbench, ${pg.commit.connections} connections: single-row INSERT commits ${fixed(pg.commit.tps, 0)} /s (mean ${fixed(pg.commit.latencyMs, 2)} ms); indexed reads ${fixed(pg.read.tps, 0)} /s (mean ${fixed(pg.read.latencyMs, 2)} ms)`,
    );
  }
  return lines;
}

export function printReport(report: BenchReport): void {
  const out: string[] = ['', ...report.environment, ''];
  for (const c of report.options.concurrencies) {
    out.push(`── concurrency ${c} ${'─'.repeat(80)}`, HEADER);
    for (const kind of ['new', 'replay', 'storm'] as const) {
      for (const system of SYSTEM_ORDER) {
        const phase = find(report, { system, kind, c });
        if (phase !== undefined) out.push(phaseRow(phase));
      }
    }
    out.push('', 'storm check (charges counted on the PSP statement, by reference):');
    out.push(...stormLines(report, c), '', 'ratios (throughput):', ...ratioLines(report, c), '');
  }
  const polluted = report.phases.filter((p) => p.costs.otherTransactions > 0);
  if (polluted.length > 0) {
    const worst = Math.max(
      ...polluted.map((p) => p.costs.otherTransactions / Math.max(1, p.load.done)),
    );
    out.push(
      `* other databases on the server ran transactions during this phase; transaction ids are server-wide, so "writes" may be high by up to ${fixed(worst, 2)} per request (the worst phase).`,
    );
  }
  for (const phase of report.phases.filter((p) => p.load.errorSamples.length > 0)) {
    out.push(
      `errors in ${phase.system} ${phase.kind} c${phase.concurrency}: ${phase.load.errorSamples.join(' | ')}`,
    );
  }
  console.log(out.join('\n'));
}

/** Whether the run showed a correctness failure: errors, or duplicate charges behind a key. */
export function failures(report: BenchReport): string[] {
  const problems = report.phases
    .filter((p) => p.load.errors > 0)
    .map((p) => `${p.system} ${p.kind} c${p.concurrency}: ${p.load.errors} errors`);
  for (const storm of report.storms) {
    const { charges } = storm;
    if (storm.system !== 'bare' && !exactlyOnce(storm)) {
      problems.push(
        `${storm.system} storm c${storm.concurrency}: charges per key ${charges.min}–${charges.max}`,
      );
    }
  }
  return problems;
}
