/**
 * `npm run bench:retention`: the cost of forgetting expired idempotency keys, by the project's
 * method (maintainPartitions: DROP of whole partitions past retention, after moving unfinished
 * requests out) against a batched DELETE of the same rows from an unpartitioned copy, measured
 * in one run on one server. Both start from the same rows: N finished keys long past retention
 * (each with a stored answer and two phase-log rows), 100 unfinished keys among them that must
 * survive, and 10,000 live keys that must not be touched. Every one of those outcomes is
 * checked after each method; a failed check makes the exit code non-zero.
 *
 *   npm run bench:retention -- [--keys 1000000]
 *
 * Uses BENCH_DATABASE_URL (an admin URL where it may CREATE/DROP a scratch database), else a
 * server on 127.0.0.1:5432, else an embedded one — as `npm run bench` does.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { migrateDatabase } from '../migrations/migrate.ts';
import { withClient, type DatabaseServer } from '../services/kernel/db/database-server.ts';
import { openScratchServer } from '../services/kernel/db/scratch-server.ts';
import { createPool, withTransaction } from '../services/kernel/db/pool.ts';
import {
  DEFAULT_RETENTION_POLICY,
  addPartition,
  maintainPartitions,
  type RetentionRun,
} from '../services/kernel/idempotency/retention.ts';
import {
  PARTITIONED_TABLES,
  UNREGISTER_PARTITION,
  dropPartition,
} from '../services/kernel/idempotency/retention.sql.ts';
import { table } from '../ops/render.ts';

const DAY_MS = 86_400_000;
/** Partitions laid out from this many days back (the oldest rows) to this many days ahead. */
const DAYS_BACK = 40;
const DAYS_AHEAD = 10;
/** Old rows' expires_at spans [now - 40 d, now - 30 d]: every one is past both retentions. */
const OLD_SPAN_SECONDS = 10 * 86_400;
const STUCK_KEYS = 100;
const LIVE_KEYS = 10_000;
const DELETE_BATCH = 10_000;
const DEFAULT_KEYS = 1_000_000;
/** A bound on the run: past this the set-up alone would take hours and tens of GB. */
const MAX_KEYS = 20_000_000;
/** Any phase (a seeding statement, one method, a check) still running after this aborts the run. */
const PHASE_LIMIT_MS = 10 * 60_000;

const OLD_PREFIX = 'bench-old-';
const STUCK_PREFIX = 'bench-stuck-';
const LIVE_PREFIX = 'bench-live-';

/** The three tables a method works on: the partitioned ones, or their flat copies. */
interface Tables {
  keys: string;
  responses: string;
  log: string;
}
const PARTITIONED: Tables = {
  keys: 'idempotency_keys',
  responses: 'idempotency_responses',
  log: 'idempotency_phase_log',
};
const FLAT: Tables = {
  keys: 'bench_keys_flat',
  responses: 'bench_responses_flat',
  log: 'bench_phase_log_flat',
};

/** The request ids a cohort got (ids come from one sequence, so each cohort is one range). */
interface IdRange {
  first: string;
  last: string;
}
interface Seeded {
  old: IdRange;
  live: IdRange;
  /** The live rows as they were before either method ran: must be identical afterwards. */
  liveDigest: string;
}

interface Timed<T> {
  value: T;
  seconds: number;
}
interface Check {
  name: string;
  expected: string;
  actual: string;
}

async function main(): Promise<void> {
  const keys = parseKeyCount();
  // BENCH_DATABASE_URL, else 127.0.0.1:5432, else an embedded server: as `npm run bench`.
  const server = await openScratchServer(process.env['BENCH_DATABASE_URL'], 'bench-retention');
  const dbName = `pgw_bench_retention_${randomBytes(4).toString('hex')}`;
  let pool: pg.Pool | undefined;
  try {
    await withClient(server.adminUrl, (admin) => admin.query(`CREATE DATABASE ${dbName}`));
    const url = server.urlFor(dbName);
    await migrateDatabase(url);
    pool = createPool({ connectionString: url, max: 2, applicationName: 'bench-retention' });
    await run({ pool, keys, server });
  } finally {
    // FORCE ends whatever an aborted phase left running, so pool.end() below cannot hang on it.
    await withClient(server.adminUrl, (admin) =>
      admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`),
    ).catch((error: unknown) => console.error(`could not drop ${dbName}:`, error));
    await pool?.end().catch(() => undefined);
    await server.stop();
  }
}

async function run(opts: { pool: pg.Pool; keys: number; server: DatabaseServer }): Promise<void> {
  const { pool, keys } = opts;
  const version = await scalar(pool, 'SHOW server_version');
  const fsync = await scalar(pool, 'SHOW fsync');
  progress(`PostgreSQL ${version} (${opts.server.kind}, fsync=${fsync}); ${keys} keys`);

  const seeded = await phase('seed', () => seed(pool, keys));
  progress(`seeded in ${seeded.seconds.toFixed(1)} s`);
  const copied = await phase('flat copy', () => copyToFlatTables(pool));
  progress(`flat copy in ${copied.seconds.toFixed(1)} s`);
  await phase('vacuum analyze', () => pool.query('VACUUM ANALYZE'));

  await checkpoint(pool);
  const projectBefore = await phase('count', () => rowCounts(pool, PARTITIONED));
  const project = await phase('maintainPartitions', () =>
    maintainPartitions(pool, DEFAULT_RETENTION_POLICY),
  );
  const projectRemoved = projectBefore.value - (await rowCounts(pool, PARTITIONED));
  progress(`maintainPartitions in ${project.seconds.toFixed(2)} s`);

  await checkpoint(pool);
  const baselineBefore = await phase('count', () => rowCounts(pool, FLAT));
  const baseline = await phase('batched DELETE', () => batchedDelete(pool));
  const baselineRemoved = baselineBefore.value - (await rowCounts(pool, FLAT));
  progress(`batched DELETE in ${baseline.seconds.toFixed(2)} s`);
  const vacuum = await phase('VACUUM', () =>
    pool.query(`VACUUM ${FLAT.keys}, ${FLAT.responses}, ${FLAT.log}`),
  );

  const checks = {
    project: [
      ...projectRunChecks(project.value),
      ...(await outcomeChecks(pool, { tables: PARTITIONED, seeded: seeded.value })),
      await movedCheck(pool),
    ],
    baseline: await outcomeChecks(pool, { tables: FLAT, seeded: seeded.value }),
  };
  const failed = printChecks(checks);
  printResults({
    version,
    keys,
    project: { seconds: project.seconds, rows: projectRemoved, run: project.value },
    baseline: { seconds: baseline.seconds, rows: baselineRemoved, batches: baseline.value },
    vacuumSeconds: vacuum.seconds,
  });
  if (failed > 0) {
    console.error(`\n${failed} check(s) failed: the figures above are not a valid comparison.`);
    process.exitCode = 1;
  }
}

function parseKeyCount(): number {
  const { values } = parseArgs({ options: { keys: { type: 'string' } } });
  const keys = Number(values.keys ?? DEFAULT_KEYS);
  if (!Number.isInteger(keys) || keys < 1 || keys > MAX_KEYS) {
    throw new Error(`--keys must be an integer in [1, ${MAX_KEYS}], got ${values.keys}`);
  }
  return keys;
}

/**
 * Runs one phase of the bench against PHASE_LIMIT_MS. On timeout the statement keeps running
 * on the server until main() drops the database WITH (FORCE), which ends it.
 */
async function phase<T>(name: string, work: () => Promise<T>): Promise<Timed<T>> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () =>
        reject(new Error(`${name} still running after ${PHASE_LIMIT_MS / 60_000} min; aborted`)),
      PHASE_LIMIT_MS,
    );
  });
  const started = performance.now();
  try {
    const value = await Promise.race([work(), limit]);
    return { value, seconds: (performance.now() - started) / 1000 };
  } finally {
    clearTimeout(timer);
  }
}

function progress(message: string): void {
  console.error(`[bench:retention] ${message}`);
}

async function scalar(pool: pg.Pool, sql: string): Promise<string> {
  const { rows } = await pool.query<Record<string, unknown>>(sql);
  return String(Object.values(rows[0] ?? {})[0]);
}

/**
 * Flushes the seeding's dirty pages before a timed phase, so neither method pays for the
 * other's writes. Needs superuser or pg_checkpoint; without it the figures are noisier.
 */
async function checkpoint(pool: pg.Pool): Promise<void> {
  await pool.query('CHECKPOINT').catch((error: unknown) => {
    progress(`CHECKPOINT refused (${String(error)}); timings include background writes`);
  });
}

// ---------------------------------------------------------------------------------------------
// Seeding

async function seed(pool: pg.Pool, keys: number): Promise<Seeded> {
  const { rows } = await pool.query<{ now: Date }>('SELECT now() AS now');
  const now = rows[0]!.now;
  await layOutDailyPartitions(pool, now);
  const oldFrom = new Date(now.getTime() - DAYS_BACK * DAY_MS);
  const old = await seedCohort(pool, {
    prefix: OLD_PREFIX,
    count: keys,
    finished: true,
    from: oldFrom,
    spanSeconds: OLD_SPAN_SECONDS,
  });
  await seedCohort(pool, {
    prefix: STUCK_PREFIX,
    count: STUCK_KEYS,
    finished: false,
    from: oldFrom,
    spanSeconds: OLD_SPAN_SECONDS,
  });
  // Live: expiring between 1 h and 23 h from now, inside today's and tomorrow's partitions.
  const live = await seedCohort(pool, {
    prefix: LIVE_PREFIX,
    count: LIVE_KEYS,
    finished: true,
    from: new Date(now.getTime() + 3_600_000),
    spanSeconds: 22 * 3_600,
  });
  return { old, live, liveDigest: await liveDigest(pool, PARTITIONED) };
}

/**
 * Replaces the migration's single catch-all partition per table (empty here) by daily ones over
 * [now - 40 d, now + 10 d), made and registered with the retention job's own statements, so
 * that the old rows land in partitions that are past retention and the job creates none ahead.
 */
async function layOutDailyPartitions(pool: pg.Pool, now: Date): Promise<void> {
  await withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ name: string }>('SELECT name FROM idempotency_partitions');
    for (const { name } of rows) {
      await tx.query(dropPartition(name));
      await tx.query(UNREGISTER_PARTITION, [name]);
    }
    const first = Math.floor(now.getTime() / DAY_MS) * DAY_MS - DAYS_BACK * DAY_MS;
    const end = now.getTime() + DAYS_AHEAD * DAY_MS;
    for (let lower = first; lower < end; lower += DAY_MS) {
      for (const parent of PARTITIONED_TABLES) {
        await addPartition(tx, { parent, lower: new Date(lower), upper: new Date(lower + DAY_MS) });
      }
    }
  });
}

/**
 * One statement per cohort: keys, their stored answers (~300 bytes of jsonb, finished keys
 * only) and phase log (provider_charge_sent, and finished when finished). Unfinished keys are
 * 'started' with an expired lease: what a crashed owner leaves behind.
 * $1 prefix, $2 count, $3 finished, $4 first expires_at, $5 span seconds.
 */
const SEED_COHORT = `
WITH k AS (
  INSERT INTO idempotency_keys
         (tenant_id, operation, key, request_hash, state, recovery_point, resource_id,
          lease_expires_at, outcome, created_at, updated_at, expires_at)
  SELECT ('00000000-0000-4000-8000-' || lpad(to_hex(i % 64), 12, '0'))::uuid,
         'payments.create.v1', $1::text || i, sha256(convert_to($1::text || i, 'UTF8')),
         CASE WHEN $3::boolean THEN 'finished' ELSE 'started' END,
         CASE WHEN $3::boolean THEN 'finished' ELSE 'provider_charge_sent' END,
         gen_random_uuid(),
         CASE WHEN $3::boolean THEN NULL ELSE t.e - interval '1 day' + interval '30 seconds' END,
         CASE WHEN $3::boolean THEN 'SUCCEEDED' END,
         t.e - interval '1 day', t.e - interval '1 day', t.e
    FROM generate_series(1, $2::int) AS i,
         LATERAL (SELECT $4::timestamptz + make_interval(secs => $5::float8 * i / $2::int) AS e) t
  RETURNING id, tenant_id, operation, key, state, resource_id, fencing_token, created_at, expires_at
), responses AS (
  INSERT INTO idempotency_responses (request_id, expires_at, version, stored_as, body)
  SELECT id, expires_at, 1, 'inline',
         jsonb_build_object(
           'payment', jsonb_build_object(
             'id', resource_id, 'status', 'SUCCEEDED', 'amount', '10.00', 'currency', 'EUR',
             'reference', key, 'paymentMethod', 'pm_card_visa', 'createdAt', created_at,
             'providerChargeId', 'ch_' || md5(key)),
           'idempotency', jsonb_build_object('key', key, 'replayed', false))
    FROM k WHERE state = 'finished'
), log AS (
  INSERT INTO idempotency_phase_log
         (request_id, tenant_id, operation, key, recovery_point, fencing_token, committed_at,
          expires_at)
  SELECT k.id, k.tenant_id, k.operation, k.key, p.point, k.fencing_token, k.created_at,
         k.expires_at
    FROM k CROSS JOIN (VALUES ('provider_charge_sent'), ('finished')) AS p (point)
   WHERE k.state = 'finished' OR p.point <> 'finished'
)
SELECT count(*)::int AS count, min(id)::text AS first, max(id)::text AS last FROM k`;

async function seedCohort(
  pool: pg.Pool,
  cohort: { prefix: string; count: number; finished: boolean; from: Date; spanSeconds: number },
): Promise<IdRange> {
  progress(`seeding ${cohort.count} ${cohort.prefix}* keys`);
  const { rows } = await pool.query<{ count: number; first: string; last: string }>(SEED_COHORT, [
    cohort.prefix,
    cohort.count,
    cohort.finished,
    cohort.from,
    cohort.spanSeconds,
  ]);
  const row = rows[0];
  if (row?.count !== cohort.count) throw new Error(`seeded ${row?.count} of ${cohort.count} keys`);
  return { first: row.first, last: row.last };
}

/**
 * The baseline's tables: plain copies with the partitioned tables' indexes. Autovacuum is off
 * on them so that it neither competes with the timed DELETE nor does part of the VACUUM that is
 * timed after it (in production it would do both, on the gateway's time).
 */
async function copyToFlatTables(pool: pg.Pool): Promise<void> {
  const statements = [
    `CREATE TABLE ${FLAT.keys} (LIKE ${PARTITIONED.keys} INCLUDING DEFAULTS)`,
    `CREATE TABLE ${FLAT.responses} (LIKE ${PARTITIONED.responses} INCLUDING DEFAULTS)`,
    `CREATE TABLE ${FLAT.log} (LIKE ${PARTITIONED.log} INCLUDING DEFAULTS)`,
    ...[FLAT.keys, FLAT.responses, FLAT.log].map(
      (flat) => `ALTER TABLE ${flat} SET (autovacuum_enabled = off)`,
    ),
    `INSERT INTO ${FLAT.keys} SELECT * FROM ${PARTITIONED.keys}`,
    `INSERT INTO ${FLAT.responses} SELECT * FROM ${PARTITIONED.responses}`,
    `INSERT INTO ${FLAT.log} SELECT * FROM ${PARTITIONED.log}`,
    `ALTER TABLE ${FLAT.keys} ADD PRIMARY KEY (id, expires_at)`,
    `CREATE INDEX ON ${FLAT.keys} (tenant_id, operation, key, expires_at)`,
    `CREATE INDEX ON ${FLAT.keys} (lease_expires_at) WHERE state <> 'finished'`,
    `ALTER TABLE ${FLAT.responses} ADD PRIMARY KEY (request_id, expires_at)`,
    `ALTER TABLE ${FLAT.log} ADD PRIMARY KEY (request_id, recovery_point, expires_at)`,
  ];
  for (const sql of statements) await pool.query(sql);
}

// ---------------------------------------------------------------------------------------------
// The baseline

/**
 * One batch, one transaction: up to 10,000 expired finished keys, with their stored answers
 * and phase log found by request id. Unfinished keys and their log are never selected.
 * $1 metadata retention seconds.
 */
const DELETE_BATCH_SQL = `
WITH doomed AS (
  DELETE FROM ${FLAT.keys}
   WHERE ctid = ANY(ARRAY(
         SELECT ctid FROM ${FLAT.keys}
          WHERE state = 'finished' AND expires_at < now() - make_interval(secs => $1)
          LIMIT ${DELETE_BATCH}))
  RETURNING id
), responses AS (
  DELETE FROM ${FLAT.responses} WHERE request_id = ANY(ARRAY(SELECT id FROM doomed)) RETURNING 1
), log AS (
  DELETE FROM ${FLAT.log} WHERE request_id = ANY(ARRAY(SELECT id FROM doomed)) RETURNING 1
)
SELECT (SELECT count(*) FROM doomed)::int AS keys`;

async function batchedDelete(pool: pg.Pool): Promise<number> {
  let batches = 0;
  for (;;) {
    const { rows } = await pool.query<{ keys: number }>(DELETE_BATCH_SQL, [
      DEFAULT_RETENTION_POLICY.metadataRetentionSeconds,
    ]);
    if ((rows[0]?.keys ?? 0) === 0) return batches;
    batches += 1;
  }
}

// ---------------------------------------------------------------------------------------------
// Checks

async function rowCounts(pool: pg.Pool, tables: Tables): Promise<number> {
  const { rows } = await pool.query<{ total: string }>(
    `SELECT ((SELECT count(*) FROM ${tables.keys}) + (SELECT count(*) FROM ${tables.responses})
             + (SELECT count(*) FROM ${tables.log}))::text AS total`,
  );
  return Number(rows[0]?.total);
}

/** Everything about the live rows either method could wrongly change. */
async function liveDigest(pool: pg.Pool, tables: Tables): Promise<string> {
  const { rows } = await pool.query<{ digest: string | null }>(
    `SELECT md5(
       (SELECT string_agg(concat_ws('|', id, state, expires_at, updated_at, fencing_token), ','
                          ORDER BY id)
          FROM ${tables.keys} WHERE key LIKE '${LIVE_PREFIX}%')
       || (SELECT string_agg(concat_ws('|', request_id, expires_at, md5(body::text)), ','
                             ORDER BY request_id)
             FROM ${tables.responses} r
            WHERE r.request_id IN (SELECT id FROM ${tables.keys} WHERE key LIKE '${LIVE_PREFIX}%'))
       || (SELECT string_agg(concat_ws('|', request_id, recovery_point, expires_at), ','
                             ORDER BY request_id, recovery_point)
             FROM ${tables.log} WHERE key LIKE '${LIVE_PREFIX}%')) AS digest`,
  );
  return rows[0]?.digest ?? '(no live rows)';
}

async function count(pool: pg.Pool, query: { sql: string; params?: unknown[] }): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(query.sql, query.params);
  return Number(rows[0]?.n);
}

function countCheck(name: string, expected: number, actual: number): Check {
  return { name, expected: String(expected), actual: String(actual) };
}

async function outcomeChecks(
  pool: pg.Pool,
  opts: { tables: Tables; seeded: Seeded },
): Promise<Check[]> {
  const { tables: t, seeded } = opts;
  const old = [seeded.old.first, seeded.old.last];
  const live = [seeded.live.first, seeded.live.last];
  const byPrefix = (table: string, prefix: string, extra = '') =>
    count(pool, { sql: `SELECT count(*) AS n FROM ${table} WHERE key LIKE '${prefix}%' ${extra}` });
  const byIds = (range: string[]) =>
    count(pool, {
      sql: `SELECT count(*) AS n FROM ${t.responses} WHERE request_id BETWEEN $1 AND $2`,
      params: range,
    });
  const digest = await liveDigest(pool, t);
  return [
    countCheck('old finished keys left', 0, await byPrefix(t.keys, OLD_PREFIX)),
    countCheck('their stored answers left', 0, await byIds(old)),
    countCheck('their phase-log rows left', 0, await byPrefix(t.log, OLD_PREFIX)),
    countCheck(
      'unfinished keys kept (started)',
      STUCK_KEYS,
      await byPrefix(t.keys, STUCK_PREFIX, `AND state = 'started'`),
    ),
    countCheck('their phase-log rows kept', STUCK_KEYS, await byPrefix(t.log, STUCK_PREFIX)),
    countCheck('live keys kept', LIVE_KEYS, await byPrefix(t.keys, LIVE_PREFIX)),
    countCheck('their stored answers kept', LIVE_KEYS, await byIds(live)),
    countCheck('their phase-log rows kept', 2 * LIVE_KEYS, await byPrefix(t.log, LIVE_PREFIX)),
    { name: 'live rows unchanged (md5 of all)', expected: seeded.liveDigest, actual: digest },
  ];
}

/** The project's method must move unfinished keys into a live partition, not keep them old. */
async function movedCheck(pool: pg.Pool): Promise<Check> {
  const moved = await count(pool, {
    sql: `SELECT count(*) AS n FROM idempotency_keys
           WHERE key LIKE '${STUCK_PREFIX}%' AND expires_at > now()`,
  });
  return countCheck('unfinished keys moved to a live partition', STUCK_KEYS, moved);
}

function projectRunChecks(run: RetentionRun): Check[] {
  return [
    { name: 'maintainPartitions result', expected: 'done', actual: run.result },
    countCheck('unfinished keys reported moved', STUCK_KEYS, run.movedUnfinished),
  ];
}

// ---------------------------------------------------------------------------------------------
// Report

/** Prints every check of both methods; returns how many failed. */
function printChecks(checks: { project: Check[]; baseline: Check[] }): number {
  const out = table(['method', 'check', 'expected', 'actual', '']);
  let failed = 0;
  for (const [method, list] of [
    ['drop partitions', checks.project],
    ['batched DELETE', checks.baseline],
  ] as const) {
    for (const check of list) {
      const ok = check.expected === check.actual;
      if (!ok) failed += 1;
      const short = (s: string) => (s.length > 12 ? `${s.slice(0, 10)}…` : s);
      out.push([
        method,
        check.name,
        short(check.expected),
        short(check.actual),
        ok ? 'ok' : 'FAIL',
      ]);
    }
  }
  console.log(`\nChecks\n${out.toString()}`);
  return failed;
}

function printResults(r: {
  version: string;
  keys: number;
  project: { seconds: number; rows: number; run: RetentionRun };
  baseline: { seconds: number; rows: number; batches: number };
  vacuumSeconds: number;
}): void {
  const n = (value: number) => value.toLocaleString('en-US');
  const out = table(['method', 'keys expired', 'rows removed (keys+answers+log)', 'seconds']);
  out.push(
    [
      `drop partitions (maintainPartitions: ${r.project.run.dropped.length} dropped)`,
      n(r.keys),
      n(r.project.rows),
      r.project.seconds.toFixed(3),
    ],
    [
      `batched DELETE (${r.baseline.batches} batches of ${n(DELETE_BATCH)})`,
      n(r.keys),
      n(r.baseline.rows),
      r.baseline.seconds.toFixed(3),
    ],
    ['  + VACUUM of the DELETE’s dead tuples', '', '', r.vacuumSeconds.toFixed(3)],
  );
  const ratio = r.baseline.seconds / r.project.seconds;
  const withVacuum = (r.baseline.seconds + r.vacuumSeconds) / r.project.seconds;
  const verdict = (x: number) =>
    x >= 1 ? `${x.toFixed(1)}× faster` : `${(1 / x).toFixed(1)}× slower`;
  console.log(`
Expiring ${n(r.keys)} finished idempotency keys, PostgreSQL ${r.version}
(plus ${STUCK_KEYS} unfinished keys among them, kept, and ${n(LIVE_KEYS)} live keys, untouched)
${out.toString()}
baseline/project = ${ratio.toFixed(2)}: drop is ${verdict(ratio)} than the batched DELETE (${verdict(withVacuum)} counting its VACUUM).
The DELETE's time excludes VACUUM: it leaves every deleted row as a dead tuple (and its index
entries) that autovacuum must later scan and reclaim; dropping a partition leaves nothing behind.`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
