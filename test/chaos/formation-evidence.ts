/**
 * What a failed run on a formation leaves for whoever reads CI's output: the formation is torn
 * down when the run ends, and with it every log that could tell a lost commit from a stale read.
 * So before that, the logs are copied into the run's log directory, and a digest is printed:
 * - which server the audit read (port, timeline, in recovery or not) and what the monitor said;
 * - when the lost answers were received, against when each fault fired and ended;
 * - the monitor's last events (draining, wait_primary, a demote timeout…);
 * - from each server's log, the lines that mark a role change or a commit released early
 *   ("canceling the wait for synchronous replication": committed here, perhaps nowhere else).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import type { Formation } from '../support/ha-formation.ts';
import type { FiredFault } from './faults.ts';

/** Server log lines worth a reader's attention after a failover went wrong. */
const NOTABLE =
  /synchronous replication|received promote|selected new timeline|fast shutdown|ready to accept|terminating connection due to administrator|database system was interrupted|pg_rewind/;
/** At most this many notable server log lines: CI shows the tail of the output. */
const SERVER_LINES = 60;

export async function formationEvidence(input: {
  formation: Formation;
  pool: pg.Pool;
  /** The run's database, read on each node alone. */
  database: string;
  logDir: string;
  fired: readonly FiredFault[];
  loadStart: number;
  lostAnswersReceivedAt: readonly number[];
}): Promise<string> {
  const { formation, pool, logDir, fired, loadStart } = input;
  const at = (ms: number) => `${((ms - loadStart) / 1000).toFixed(1)} s`;
  const out: string[] = ['', 'formation evidence (times since the load began):'];

  const server = await pool
    .query<{ port: number; timeline: string; in_recovery: boolean }>(
      `SELECT inet_server_port() AS port, pg_is_in_recovery() AS in_recovery,
              substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) AS timeline`,
    )
    .then(
      ({ rows }) => JSON.stringify(rows[0]),
      (error: unknown) => `unreadable (${String(error)})`,
    );
  const states = await formation.states().catch((error: unknown) => String(error));
  out.push(`  the audit read ${server}; the monitor reports ${states}`);
  // Each node alone: two writable nodes, or keys on one that the other lacks, tell a stale
  // read (or a split brain) from commits lost in a failover.
  for (const node of ['node_1', 'node_2'] as const) {
    out.push(`  ${node}: ${await nodeView(formation.nodeUrl(node, input.database))}`);
  }

  const lost = [...input.lostAnswersReceivedAt].sort((a, b) => a - b);
  if (lost.length > 0) {
    out.push(
      `  lost answers were received from ${at(lost[0]!)} to ${at(lost[lost.length - 1]!)} (${lost.length})`,
    );
  }
  out.push('  faults:');
  for (const fault of fired) {
    const ended = fault.endedAt === undefined ? 'unfinished' : at(fault.endedAt);
    out.push(`    ${at(fault.at).padStart(8)} → ${ended.padStart(10)}  ${fault.kind}`);
  }

  const copied = join(logDir, 'formation');
  await formation.copyLogs(copied).catch(() => undefined);
  out.push(`  logs: ${copied}`);
  const events = await formation.events(30).catch((error: unknown) => String(error));
  out.push(
    '  the monitor’s last events:',
    ...events
      .trimEnd()
      .split('\n')
      .map((l) => `    ${l}`),
  );
  // pg_basebackup and pg_rewind copy a node's log directory with its data, so each node holds
  // the other's older files too: one timeline, duplicates dropped, by time (each line's pid
  // tells the servers apart; the events above say which node was which).
  const lines = new Set<string>();
  for (const node of ['node_1', 'node_2'] as const) {
    for (const line of await notableLines(join(copied, node))) lines.add(line);
  }
  out.push(`  the servers' logs (the last ${SERVER_LINES} notable lines):`);
  out.push(
    ...collapseSessionEnds([...lines].sort())
      .slice(-SERVER_LINES)
      .map((l) => `    ${l}`),
  );
  return out.join('\n');
}

/**
 * A session's own FATAL line only: the WARNING "canceling the wait for synchronous replication
 * and terminating connection…" says a commit was left on the primary alone, and stays a line of
 * its own.
 */
const SESSION_ENDED = /FATAL: +terminating connection due to administrator command/;
/** A server log line's timestamp: `2026-12-08 00:00:01.103 UTC`. */
const STAMP_LENGTH = 27;

/**
 * A backend kill or a fence ends dozens of sessions at once, one log line each, and those runs
 * of lines would push every other notable line out of the tail CI shows: each run becomes one
 * line with its count and its span.
 */
export function collapseSessionEnds(sorted: readonly string[]): string[] {
  const out: string[] = [];
  let run: string[] = [];
  const flush = () => {
    if (run.length === 1) out.push(run[0]!);
    if (run.length > 1) {
      const first = run[0]!.slice(0, STAMP_LENGTH);
      const last = run[run.length - 1]!.slice(0, STAMP_LENGTH);
      out.push(`${first} … ${last}: ${run.length} sessions ended by an administrator command`);
    }
    run = [];
  };
  for (const line of sorted) {
    if (SESSION_ENDED.test(line)) {
      run.push(line);
      continue;
    }
    flush();
    out.push(line);
  }
  flush();
  return out;
}

async function notableLines(dir: string): Promise<string[]> {
  const files = (await readdir(dir).catch(() => [] as string[]))
    .filter((f) => f.startsWith('postgresql-'))
    .sort();
  const lines: string[] = [];
  for (const file of files) {
    const text = await readFile(join(dir, file), 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      // pg_rewind's single-user postgres writes its prompt before the lines it logs.
      if (NOTABLE.test(line)) lines.push(line.replace(/^(backend> )+/, '').slice(0, 160));
    }
  }
  return lines;
}

async function nodeView(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<Record<string, unknown>>(
      `SELECT inet_server_port() AS port, pg_is_in_recovery() AS in_recovery,
              current_setting('transaction_read_only') AS read_only,
              (SELECT timeline_id FROM pg_control_checkpoint()) AS checkpoint_timeline,
              (SELECT count(*)::int FROM idempotency_keys) AS keys,
              (SELECT count(*)::int FROM idempotency_keys WHERE state = 'finished') AS finished`,
    );
    return JSON.stringify(rows[0]);
  } catch (error) {
    return `unreadable (${error instanceof Error ? error.message : String(error)})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}
