/**
 * `npm run bench:partitions`: what each retention partition costs PostgreSQL per request.
 *
 * A key is looked up by (tenant, operation, key), which says nothing of its expiry, so every
 * lookup reaches every partition of the idempotency tables: the replay read, admission's check
 * for a live row, the fenced updates. The statements are prepared and their plans generic, so
 * the cost is not planning but starting the executor: each partition's index scan is opened and
 * locked on every call. pg_stat_statements does not see it (it times ExecutorRun, not
 * ExecutorStart), so this measures the backend's own CPU (/proc/<pid>/schedstat) while one
 * connection runs the engine's statements for new keys: the first read, the admission round
 * trip, the finishing round trip, then the read again as a replay makes it. It does so at the
 * partitions a gateway makes at start, then with empty partitions added (a lookup pays for an
 * empty one as for a full one), and prints the cost per partition. Needs the PostgreSQL server
 * on the same host (it reads the backend's /proc entry).
 *
 *   npm run bench:partitions -- [--keys 2000]
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { createPool, withOneRoundTrip } from '../services/kernel/db/pool.ts';
import {
  FINISH_KEY,
  INSERT_KEY,
  SELECT_KEY,
  lockingScope,
} from '../services/kernel/idempotency/idempotency.sql.ts';
import {
  DEFAULT_RETENTION_POLICY,
  addPartition,
  maintainPartitions,
} from '../services/kernel/idempotency/retention.ts';
import { PARTITIONED_TABLES } from '../services/kernel/idempotency/retention.sql.ts';
import { createScratchDatabase } from './bench/scratch-database.ts';
import { fixed } from './bench/stats.ts';

const DAY_MS = 86_400_000;
const LEASE_MS = 30_000;
/**
 * Empty partitions added per step, and the steps: 3 at start (the default layout: the initial
 * partition, the one today's keys land in, one ahead), then 7, then 11.
 */
const ADDED_PER_STEP = 4;
const STEPS = 3;

interface Cost {
  partitions: number;
  /** µs of the backend's CPU per key, per statement group. */
  read: number;
  admit: number;
  finish: number;
  /** The same read once the key is finished: a replay's, which finds the row and its answer. */
  replay: number;
}

/** The backend's CPU time so far, in µs: schedstat's first field is ns on a CPU. */
function backendCpuUs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
}

async function measure(
  pool: pg.Pool,
  pid: number,
  keys: number,
): Promise<Omit<Cost, 'partitions'>> {
  const tenant = randomUUID();
  const spent = { read: 0, admit: 0, finish: 0, replay: 0 };
  const timed = async <T>(part: keyof typeof spent, work: () => Promise<T>): Promise<T> => {
    const before = backendCpuUs(pid);
    const result = await work();
    spent[part] += backendCpuUs(pid) - before;
    return result;
  };
  for (let i = 0; i < keys; i++) {
    const key = `bench-partitions-${i}-${randomUUID()}`;
    const scope = [tenant, 'createPayment', key];
    await timed('read', () => pool.query(SELECT_KEY, scope));
    const [admitted] = await timed('admit', () =>
      withOneRoundTrip(
        pool,
        [
          {
            text: INSERT_KEY,
            values: [
              ...scope,
              Buffer.from('hash'),
              'provider_charge_sent',
              randomUUID(),
              LEASE_MS,
              DEFAULT_RETENTION_POLICY.ttlSeconds,
            ],
          },
        ],
        { first: [lockingScope(BigInt(i))] },
      ),
    );
    const token = (admitted?.rows[0] as { fencing_token: string }).fencing_token;
    await timed('finish', () =>
      withOneRoundTrip(pool, [
        {
          text: FINISH_KEY,
          values: [
            ...scope,
            token,
            'provider_charge_sent',
            '{"status":"SUCCEEDED"}',
            1,
            'inline',
            'succeeded',
            DEFAULT_RETENTION_POLICY.ttlSeconds,
          ],
        },
      ]),
    );
    await timed('replay', () => pool.query(SELECT_KEY, scope));
  }
  return {
    read: spent.read / keys,
    admit: spent.admit / keys,
    finish: spent.finish / keys,
    replay: spent.replay / keys,
  };
}

async function partitionCount(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'idempotency_keys'::regclass`,
  );
  return rows[0]?.n ?? 0;
}

/** Empty partitions past the newest one: a lookup opens them as it opens full ones. */
async function addEmptyPartitions(pool: pg.Pool, count: number): Promise<void> {
  const { rows } = await pool.query<{ upper: Date }>(
    `SELECT max(upper_bound) AS upper FROM idempotency_partitions`,
  );
  const from = rows[0]?.upper.getTime() ?? Date.now();
  for (const parent of PARTITIONED_TABLES) {
    for (let i = 0; i < count; i++) {
      const lower = new Date(from + i * DAY_MS);
      await addPartition(pool, { parent, lower, upper: new Date(lower.getTime() + DAY_MS) });
    }
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { keys: { type: 'string', default: '2000' } } });
  const keys = Number(values.keys);
  if (!Number.isInteger(keys) || keys < 100 || keys > 100_000) {
    throw new Error('--keys takes an integer in [100, 100000]');
  }
  const db = await createScratchDatabase({ embedded: false });
  // One connection: its backend is the one measured.
  const pool = createPool({ connectionString: db.url, max: 1, applicationName: 'pgw-bench' });
  try {
    await maintainPartitions(pool, DEFAULT_RETENTION_POLICY);
    const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const pid = rows[0]?.pid ?? 0;
    // The pid is the server's: on another machine (or in a container) it names some other
    // process here, or none.
    const comm = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '');
    if (comm.trim() !== 'postgres') {
      throw new Error(
        `backend ${pid} is no postgres process here: bench:partitions needs the server on this machine`,
      );
    }
    await measure(pool, pid, Math.min(keys, 500)); // warm-up: prepared statements, caches
    const costs: Cost[] = [];
    for (let step = 0; step < STEPS; step++) {
      if (step > 0) await addEmptyPartitions(pool, ADDED_PER_STEP);
      await measure(pool, pid, 100); // plans rebuilt after the DDL
      costs.push({ partitions: await partitionCount(pool), ...(await measure(pool, pid, keys)) });
    }
    print(costs, keys);
  } finally {
    await pool.end();
    await db.drop();
  }
}

function print(costs: Cost[], keys: number): void {
  console.log(`PostgreSQL backend CPU per key, µs (${keys} new keys per step, one connection)`);
  console.log(`  partitions  first read     admit    finish   new key    replay`);
  for (const c of costs) {
    const total = c.read + c.admit + c.finish;
    console.log(
      `  ${String(c.partitions).padStart(10)}${[c.read, c.admit, c.finish, total, c.replay].map((v) => fixed(v, 0).padStart(10)).join('')}`,
    );
  }
  const first = costs[0];
  const last = costs.at(-1);
  if (first === undefined || last === undefined || last.partitions === first.partitions) return;
  const per = (f: (c: Cost) => number) =>
    (f(last) - f(first)) / (last.partitions - first.partitions);
  const perKey = fixed(
    per((c) => c.read + c.admit + c.finish),
    0,
  );
  const perReplay = fixed(
    per((c) => c.replay),
    0,
  );
  console.log(`  each partition: ${perKey} µs per new key, ${perReplay} µs per replay`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
