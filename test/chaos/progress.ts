/**
 * Progress while the load runs: a bar on a terminal (always for --soak), else one line every
 * PROGRESS_LINE_MS so a CI log shows the run is alive without drowning in output.
 */
import cliProgress from 'cli-progress';
import type { FaultCounts } from './faults.ts';
import type { Stats } from './journal.ts';

const BAR_REFRESH_MS = 500;
const PROGRESS_LINE_MS = 15_000;

export interface Progress {
  stop(): void;
}

export function startProgress(input: {
  bar: boolean;
  total: number;
  stats: Stats;
  faults: FaultCounts;
}): Progress {
  const { stats, faults, total } = input;
  const payload = () => ({
    kills: faults.sigkill,
    stops: faults.sigstop,
    pgkills: faults.backendKill,
    pending: stats.outcomePending,
    retries: stats.retries,
  });
  if (input.bar) {
    const bar = new cliProgress.SingleBar(
      {
        format:
          'chaos [{bar}] {percentage}% {value}/{total} ops | SIGKILL {kills} SIGSTOP {stops} pg-kill {pgkills} | retries {retries} pending {pending} | {duration_formatted}',
        hideCursor: true,
        etaBuffer: 200,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, payload());
    const timer = setInterval(() => bar.update(stats.settled, payload()), BAR_REFRESH_MS);
    return {
      stop() {
        clearInterval(timer);
        bar.update(stats.settled, payload());
        bar.stop();
      },
    };
  }
  const started = Date.now();
  const timer = setInterval(() => {
    const p = payload();
    const elapsed = ((Date.now() - started) / 1000).toFixed(0);
    console.log(
      `  ${elapsed}s: ${stats.settled}/${total} final, ${stats.launched} launched | SIGKILL ${p.kills} SIGSTOP ${p.stops} pg-kill ${p.pgkills} | retries ${p.retries}`,
    );
  }, PROGRESS_LINE_MS);
  return { stop: () => clearInterval(timer) };
}
