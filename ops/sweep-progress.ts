import cliProgress from 'cli-progress';
import type { Context } from './commands.ts';

/** How far a sweep over stored rows has come, shown as it goes. */
export interface SweepProgress<Tally> {
  advance(done: number, tally: Tally): void;
  stop(): void;
}

/** What a sweep shows of its tally: on the bar, and on a log line. */
export interface SweepProgressView<Tally> {
  /** cli-progress' format for the bar: its own tokens, and the counters barCounters names. */
  barFormat: string;
  barCounters(tally: Tally): Record<string, number>;
  /** The tally on a log line, after `progress 30% (3/10): `. */
  logLine(tally: Tally): string;
}

/**
 * A redrawn bar on a terminal a person watches; in logs (CI, a pipe to tee), where a redrawn bar
 * is noise, one line per tenth done. Rows stored while the sweep runs may add to what it finds:
 * the bar grows, never overflows, and a log line never says more than 100%.
 */
export function startSweepProgress<Tally>(
  ctx: Context,
  start: { total: number; tally: Tally },
  view: SweepProgressView<Tally>,
): SweepProgress<Tally> {
  const { total } = start;
  if (ctx.interactive) {
    const bar = new cliProgress.SingleBar(
      { stream: process.stdout, format: view.barFormat },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, view.barCounters(start.tally));
    return {
      advance(done, tally) {
        if (done > bar.getTotal()) bar.setTotal(done);
        bar.update(done, view.barCounters(tally));
      },
      stop: () => bar.stop(),
    };
  }
  let printedTenths = 0;
  return {
    advance(done, tally) {
      const tenths = Math.min(10, Math.floor((done * 10) / total));
      if (tenths <= printedTenths) return;
      printedTenths = tenths;
      ctx.print(`progress ${tenths * 10}% (${done}/${total}): ${view.logLine(tally)}`);
    },
    stop: () => undefined,
  };
}
