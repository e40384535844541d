import type { Command } from './args.ts';
import { describeFailure, withDeadline, formatFailure, type CallFailure } from './client.ts';
import { describeTarget, fetchUnfinished, type Context } from './commands.ts';
import { reportTable } from './render.ts';
import { startSweepProgress } from './sweep-progress.ts';
import { EXIT } from './usage.ts';

/**
 * Past this many failures in a row (not conflicts) the sweep stops: the gateway or the database
 * is down, or the token was rotated mid-sweep, and going on only adds the same error per row.
 */
const MAX_CONSECUTIVE_ERRORS = 5;
/** Individual failures listed after the summary; the counts cover the rest. */
const MAX_FAILURES_SHOWN = 20;

interface Tally {
  redriven: number;
  finished: number;
  unfinished: number;
  conflicts: number;
  errors: number;
}

/**
 * Re-drives every matching request one at a time — never in parallel, so a sweep after an
 * outage does not itself become a burst against a provider that just came back. Conflicts (the
 * worker or a client retry got there first, or the owner's lease is live) are expected and
 * counted; the sweep goes on past them.
 */
export async function redriveAll(
  ctx: Context,
  command: Extract<Command, { name: 'redrive-all' }> & { interrupted: AbortSignal },
): Promise<number> {
  const rows = await fetchUnfinished(ctx, { states: [command.state], limit: command.limit });
  const capped =
    rows.length === command.limit ? ` (the first ${command.limit}; raise --limit)` : '';
  ctx.print(`${rows.length} ${command.state} request(s) to re-drive${capped}`);

  const tally: Tally = { redriven: 0, finished: 0, unfinished: 0, conflicts: 0, errors: 0 };
  const failures: Array<{ target: string; failure: CallFailure }> = [];
  let consecutiveErrors = 0;
  let done = 0;
  let stoppedBecause: string | null = null;
  const progress =
    rows.length === 0
      ? null
      : startSweepProgress(
          ctx,
          { total: rows.length, tally },
          {
            barFormat:
              're-driving [{bar}] {percentage}% {value}/{total} | conflicts {conflicts} errors {errors} | {duration_formatted}',
            barCounters: (now) => ({ conflicts: now.conflicts, errors: now.errors }),
            logLine: (now) =>
              `${now.redriven} re-driven, ${now.conflicts} conflicts, ${now.errors} errors`,
          },
        );
  try {
    for (const row of rows) {
      if (command.interrupted.aborted) {
        stoppedBecause = 'interrupted';
        break;
      }
      const target = { tenantId: row.tenant_id, operation: row.operation, key: row.key };
      try {
        const { state } = await withDeadline((options) =>
          ctx.ops.redrive.mutate(
            { ...target, actor: command.actor, reason: command.reason },
            options,
          ),
        );
        tally.redriven += 1;
        if (state === 'finished') tally.finished += 1;
        else tally.unfinished += 1;
        consecutiveErrors = 0;
      } catch (error) {
        const failure = describeFailure(error, ctx.config);
        failures.push({ target: describeTarget(target), failure });
        if (failure.code === 'CONFLICT') {
          tally.conflicts += 1;
          consecutiveErrors = 0;
        } else {
          tally.errors += 1;
          consecutiveErrors += 1;
        }
      }
      done += 1;
      progress?.advance(done, tally);
      if (consecutiveErrors >= MAX_CONSECUTIVE_ERRORS) {
        stoppedBecause = `${MAX_CONSECUTIVE_ERRORS} errors in a row`;
        break;
      }
    }
  } finally {
    progress?.stop();
  }

  ctx.print(
    reportTable([
      ['re-driven', tally.redriven],
      ['now finished', tally.finished],
      ['still unfinished', tally.unfinished],
      ['conflicts', tally.conflicts],
      ['errors', tally.errors],
      ['not attempted', rows.length - done],
    ]),
  );
  if (stoppedBecause !== null)
    ctx.print(`sweep stopped early (${stoppedBecause}); run it again to go on`);
  for (const { target, failure } of failures.slice(0, MAX_FAILURES_SHOWN))
    ctx.print(`  ${target}: ${formatFailure(failure)}`);
  if (failures.length > MAX_FAILURES_SHOWN)
    ctx.print(`  … and ${failures.length - MAX_FAILURES_SHOWN} more`);
  return tally.errors > 0 || stoppedBecause !== null ? EXIT.failed : EXIT.ok;
}
