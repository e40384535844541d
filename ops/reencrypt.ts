import type { Command } from './args.ts';
import { withDeadline } from './client.ts';
import type { Context } from './commands.ts';
import { clean, reportTable } from './render.ts';
import { startSweepProgress } from './sweep-progress.ts';
import { EXIT } from './usage.ts';

/** Individual failures listed after the summary; the count covers the rest. */
const MAX_FAILURES_SHOWN = 20;

interface Tally {
  scanned: number;
  resealed: number;
  failed: number;
}

interface Batch<Cursor> {
  scanned: number;
  resealed: number;
  failures: Array<{ row: string; error: string }>;
  next: Cursor | null;
}

/** Where each sweep stands, as the gateway hands it back: opaque here, passed on as it came. */
type AnswerCursor = { requestId: string; expiresAt: string };
type SecretCursor = { tenantId: string; endpointId: string };

/**
 * Re-seals every stored answer, then every webhook signing secret, under the gateway's first
 * data key, one batch per call: the gateway holds the keys, this tool never sees one. Each batch
 * writes a row only if it is unchanged since read, so running beside live traffic, stopping
 * half-way (Ctrl-C) and running again are all safe; a second run finds only what the first
 * could not do. Ends with the keys stored values still need: a key no count names may go.
 */
export async function reencrypt(
  ctx: Context,
  command: Extract<Command, { name: 'reencrypt' }>,
): Promise<number> {
  const before = await withDeadline((options) => ctx.ops.dataKeys.query(undefined, options));
  const pending =
    notUnder(before.primary, before.answers) + notUnder(before.primary, before.secrets);
  ctx.print(
    `${pending} stored value(s) to re-seal under data key "${clean(before.primary)}" (answers and webhook secrets)`,
  );
  const tally: Tally = { scanned: 0, resealed: 0, failed: 0 };
  const failures: Array<{ row: string; error: string }> = [];
  const progress =
    pending === 0
      ? null
      : startSweepProgress(
          ctx,
          { total: pending, tally },
          {
            barFormat:
              're-sealing [{bar}] {percentage}% {value}/{total} | failed {failed} | {duration_formatted}',
            barCounters: (now) => ({ failed: now.failed }),
            logLine: (now) => `${now.resealed} re-sealed, ${now.failed} failed`,
          },
        );
  const take = <Cursor>(batch: Batch<Cursor>): Cursor | null => {
    tally.scanned += batch.scanned;
    tally.resealed += batch.resealed;
    tally.failed += batch.failures.length;
    failures.push(...batch.failures);
    progress?.advance(tally.scanned, tally);
    return batch.next;
  };
  try {
    await sweep<AnswerCursor>(
      (after, options) => ctx.ops.reencryptAnswers.mutate({ after, limit: command.batch }, options),
      take,
    );
    await sweep<SecretCursor>(
      (after, options) => ctx.ops.reencryptSecrets.mutate({ after, limit: command.batch }, options),
      take,
    );
  } finally {
    progress?.stop();
  }

  const after = await withDeadline((options) => ctx.ops.dataKeys.query(undefined, options));
  ctx.print(
    reportTable([
      ['re-sealed', tally.resealed],
      ['changed meanwhile (run again)', tally.scanned - tally.resealed - tally.failed],
      ['could not be opened', tally.failed],
    ]),
  );
  for (const { row, error } of failures.slice(0, MAX_FAILURES_SHOWN))
    ctx.print(`  ${clean(row)}: ${clean(error, 400)}`);
  if (failures.length > MAX_FAILURES_SHOWN)
    ctx.print(`  … and ${failures.length - MAX_FAILURES_SHOWN} more`);
  ctx.print(
    `data keys still needed (keyring: ${after.keyring.map((id) => clean(id)).join(', ')}):`,
  );
  ctx.print(
    reportTable(
      keyUsage(after).map(([keyId, counts]) => [
        keyId === '' ? '(none: clear text or plain SHA-256)' : clean(keyId),
        `answers ${counts.answers}, secrets ${counts.secrets}, live request hashes ${counts.requestHashes}`,
      ]),
    ),
  );
  return tally.failed > 0 ? EXIT.failed : EXIT.ok;
}

/** Calls one batch after another, each from where the last stopped, to the end. */
async function sweep<Cursor>(
  call: (after: Cursor | null, options: { signal: AbortSignal }) => Promise<Batch<Cursor>>,
  take: (batch: Batch<Cursor>) => Cursor | null,
): Promise<void> {
  let after: Cursor | null = null;
  do {
    const from = after;
    after = take(await withDeadline((options) => call(from, options)));
  } while (after !== null);
}

/** Values sealed under any key other than `primary`, or in clear. */
function notUnder(primary: string, byKey: Record<string, number>): number {
  return Object.entries(byKey)
    .filter(([keyId]) => keyId !== primary)
    .reduce((sum, [, n]) => sum + n, 0);
}

type Usage = { answers: number; secrets: number; requestHashes: number };

function keyUsage(status: {
  answers: Record<string, number>;
  secrets: Record<string, number>;
  requestHashes: Record<string, number>;
}): Array<[string, Usage]> {
  const ids = new Set([
    ...Object.keys(status.answers),
    ...Object.keys(status.secrets),
    ...Object.keys(status.requestHashes),
  ]);
  return [...ids].sort().map((keyId) => [
    keyId,
    {
      answers: status.answers[keyId] ?? 0,
      secrets: status.secrets[keyId] ?? 0,
      requestHashes: status.requestHashes[keyId] ?? 0,
    },
  ]);
}
