/**
 * A pg_auto_failover formation for a test or the chaos suite's failover tier, started and
 * stopped through the project's own script (scripts/ha/formation.sh), on loopback ports found
 * free. What a test does to it is what an outage does: kill a whole node (keeper and
 * postmaster), start it again (it rejoins through pg_rewind), ask the monitor for a switchover,
 * or freeze the standby.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { isPortFree } from '../../dev/embedded-postgres/database-server.ts';

const run = promisify(execFile);
const SCRIPT = resolve(import.meta.dirname, '../../scripts/ha/formation.sh');
/** Creating a formation takes about 15 s here; a slow machine, or an install, more. */
const START_TIMEOUT_MS = 300_000;

export type NodeName = 'node_1' | 'node_2';

export interface Formation {
  /** The libpq URL the gateway is given: both nodes, target_session_attrs=read-write. */
  url: string;
  /** The monitor's database, for what the formation's state is. */
  monitorUrl: string;
  dir: string;
  /** The URL of one node alone (for reading what it holds). */
  nodeUrl(node: NodeName, database?: string): string;
  /** The URL for another database on the formation. */
  urlFor(database: string): string;
  /** The node the monitor has as primary (reported and assigned), if any. */
  primary(): Promise<NodeName | undefined>;
  /** The monitor's reported (or assigned) states, node_1 first ("primary,secondary"). */
  states(which?: 'reported' | 'assigned'): Promise<string>;
  /** Waits until the states read `want` (say "primary,secondary" after a rejoin). */
  waitForStates(want: string | ((states: string) => boolean), timeoutMs?: number): Promise<void>;
  /** SIGKILL of the node's keeper, postmaster and backends: a crashed machine. */
  killNode(node: NodeName): Promise<void>;
  /** Starts a killed node again. */
  runNode(node: NodeName): Promise<void>;
  /** SIGSTOP (or SIGCONT) of every process of the node: a machine that stalls. */
  freezeNode(node: NodeName, frozen: boolean): Promise<void>;
  /** SIGSTOP (or SIGCONT) of a primary's WAL senders alone: its standby falls behind. */
  holdWal(node: NodeName, held: boolean): Promise<void>;
  /** `pg_autoctl perform switchover`: the planned failover of routine maintenance. */
  switchover(): Promise<void>;
  /** The monitor's last `count` events (`pg_autoctl show events`), as it prints them. */
  events(count?: number): Promise<string>;
  /** Copies every keeper's and server's log under `dest` (formation.sh copy-logs). */
  copyLogs(dest: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startFormation(opts: { async?: boolean } = {}): Promise<Formation> {
  const basePort = await freePortRun(3);
  const dir = await mkdtemp(join(tmpdir(), 'pgw-ha-'));
  await rm(dir, { recursive: true }); // the script creates it, owned by postgres
  const env = { ...process.env, HA_BASE_PORT: String(basePort) };
  const script = (...args: string[]) =>
    run('bash', [SCRIPT, ...args], { env, timeout: START_TIMEOUT_MS, maxBuffer: 1 << 20 });
  let url: string;
  try {
    const { stdout } = await script('start', dir, ...(opts.async === true ? ['--async'] : []));
    url = stdout.trim().split('\n').pop() ?? '';
  } catch (error) {
    await script('stop', dir).catch(() => undefined);
    throw error;
  }
  const monitorUrl = `postgresql://postgres@127.0.0.1:${basePort}/pg_auto_failover`;
  const nodePort = (node: NodeName) => basePort + Number(node.slice(-1));
  const monitorQuery = async <R extends pg.QueryResultRow>(text: string): Promise<R[]> => {
    const client = new pg.Client({ connectionString: monitorUrl, connectionTimeoutMillis: 2_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return (await client.query<R>(text)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const states = async (which: 'reported' | 'assigned' = 'reported') => {
    const column = which === 'reported' ? 'reportedstate' : 'goalstate';
    const rows = await monitorQuery<{ states: string }>(
      `SELECT string_agg(${column}::text, ',' ORDER BY nodeid) AS states FROM pgautofailover.node`,
    );
    return rows[0]?.states ?? '';
  };

  const formation: Formation = {
    url,
    monitorUrl,
    dir,
    nodeUrl: (node, database = 'payments') =>
      `postgresql://postgres@127.0.0.1:${nodePort(node)}/${database}`,
    urlFor: (database) => url.replace('/payments?', `/${database}?`),
    async primary() {
      const rows = await monitorQuery<{ nodename: string }>(
        `SELECT nodename FROM pgautofailover.node
          WHERE reportedstate IN ('primary', 'wait_primary', 'single')
            AND goalstate = reportedstate`,
      );
      return rows[0]?.nodename as NodeName | undefined;
    },
    states,
    async waitForStates(want, timeoutMs = 60_000) {
      const matches = typeof want === 'string' ? (s: string) => s === want : want;
      const deadline = Date.now() + timeoutMs;
      let last = '';
      while (Date.now() < deadline) {
        last = await states('reported').catch((error: unknown) => String(error));
        if (matches(last)) return;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      throw new Error(`the formation's states are '${last}' after ${timeoutMs} ms`);
    },
    async killNode(node) {
      await script('kill-node', dir, node);
    },
    async runNode(node) {
      await script('run-node', dir, node);
    },
    async freezeNode(node, frozen) {
      await script(frozen ? 'freeze-node' : 'thaw-node', dir, node);
    },
    async holdWal(node, held) {
      await script(held ? 'hold-wal' : 'release-wal', dir, node);
    },
    async switchover() {
      await script('switchover', dir);
    },
    async events(count = 40) {
      return (await script('events', dir, String(count))).stdout;
    },
    async copyLogs(dest) {
      await script('copy-logs', dir, dest);
    },
    async stop() {
      for (const node of ['node_1', 'node_2'] as const)
        await formation.freezeNode(node, false).catch(() => undefined);
      await script('stop', dir);
    },
  };
  return formation;
}

/** The first of `count` consecutive loopback ports that are all free, above the usual ones. */
async function freePortRun(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 20_000);
    let free = true;
    for (let i = 0; i < count && free; i++) free = await isPortFree(base + i);
    if (free) return base;
  }
  throw new Error(`no run of ${count} free loopback ports found`);
}
