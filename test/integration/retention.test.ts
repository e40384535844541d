import pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import { AdmissionsInFlight } from '../../lib/idempotency/admissions-in-flight.ts';
import { RecentScopes } from '../../lib/idempotency/recent-scopes.ts';
import { IdempotencyEngine } from '../../lib/idempotency/engine.ts';
import { defineOperation } from '../../lib/idempotency/operation.ts';
import { maintainPartitions, partitionSlackSeconds } from '../../lib/idempotency/retention.ts';
import { CLAIM_STALE_KEYS } from '../../lib/idempotency/idempotency.sql.ts';
import { moveLowWater } from '../../lib/idempotency/low-water.ts';
import { PARTITIONED_TABLES } from '../../lib/idempotency/retention.sql.ts';
import { useTestDatabase } from '../support/test-database.ts';
import {
  DAY_MS,
  dailyPartitionsSince,
  dbNow,
  generationsOf,
  layOutPartitions,
} from '../support/test-partitions.ts';
import { errorCodeOf, paymentOf } from '../support/graphql-client.ts';
import { createPaymentOn, paymentInput, useTestStackOn } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';

/** How far past the first request's would-be expiry the forced partition boundary lies. */
const BOUNDARY_MARGIN_MS = 6_000;
const TTL_SECONDS = 3;
const METADATA_RETENTION_SECONDS = 7 * 86_400;
const POLICY = {
  ttlSeconds: TTL_SECONDS,
  metadataRetentionSeconds: METADATA_RETENTION_SECONDS,
  partitionSeconds: 86_400,
};

const database = useTestDatabase('retention');
// A lease longer than any wait below: the straddle test holds an admission open for seconds.
const stack = useTestStackOn(database, { app: { ttlSeconds: TTL_SECONDS, leaseMs: 30_000 } });

/** An operation of these tests' own, driven through the engine directly. */
function testOperation(name: string) {
  return defineOperation({
    id: `tests.${name}.v1`,
    publicName: name,
    service: 'payments',
    answerVersion: 1,
    outcomeOf: () => 'done',
  });
}

function metricValue(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

/**
 * Logs the admission of `keys` as admission did before ADR 0056 (a request in flight across the
 * upgrade), or as a request's first advance does: a phase-log row retention must keep with its
 * unfinished request.
 */
async function logAdmissionOf(keys: string[]): Promise<void> {
  const { rowCount } = await stack.db.query(
    `INSERT INTO idempotency_phase_log
            (request_id, tenant_id, operation, key, recovery_point, fencing_token, committed_at,
             expires_at)
     SELECT id, tenant_id, operation, key, recovery_point, 1, created_at, expires_at
       FROM idempotency_keys WHERE key = ANY($1)`,
    [keys],
  );
  expect(rowCount).toBe(keys.length);
}

async function metricsText(): Promise<string> {
  return stack.app.metrics.registry.metrics();
}

describe('the replay window', () => {
  beforeEach(async () => {
    await dailyPartitionsSince(stack.db, 30);
  });

  it('replays within the window, then runs a retry after it as a new request, counted', async () => {
    const before = await metricsText();
    const first = await createPaymentOn(stack, paymentInput('win-1'));
    const info = (first.body.data?.['createPayment'] as { idempotency: { expiresAt: string } })
      .idempotency;
    const firstPayment = paymentOf(first);
    const expiresAt = Date.parse(info.expiresAt);
    expect(expiresAt - Date.parse(firstPayment.createdAt)).toBeGreaterThanOrEqual(
      TTL_SECONDS * 1000,
    );

    const replay = await createPaymentOn(stack, paymentInput('win-1'));
    expect(paymentOf(replay).id).toBe(firstPayment.id);

    // Past the window: the key is forgotten, even for a different command under it.
    await waitUntil(async () => (await dbNow(stack.db)) > expiresAt, {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'the database clock to pass the key’s expiry',
    });
    const late = await createPaymentOn(stack, paymentInput('win-1', { amount: '11.00' }));
    const latePayment = paymentOf(late);
    expect(latePayment.id).not.toBe(firstPayment.id);
    expect(latePayment.amount).toBe('11.00');
    expect(
      (late.body.data?.['createPayment'] as { idempotency: { replayed: boolean } }).idempotency
        .replayed,
    ).toBe(false);

    // ...and the new request is itself remembered: its retry replays it.
    const again = await createPaymentOn(stack, paymentInput('win-1', { amount: '11.00' }));
    expect(paymentOf(again).id).toBe(latePayment.id);
    expect(stack.sandbox.charges({ reference: 'win-1' })).toHaveLength(2);

    const after = await metricsText();
    const expired =
      'idempotency_expired_retries_total{service="payments",operation="createPayment"}';
    const outcome =
      'idempotency_requests_total{service="payments",operation="createPayment",outcome="expired_retry"}';
    expect(metricValue(after, expired) - metricValue(before, expired)).toBe(1);
    expect(metricValue(after, outcome) - metricValue(before, outcome)).toBe(1);

    // The first generation stays as metadata beside the second.
    const generations = await generationsOf(stack.db, 'win-1');
    expect(generations.map((g) => [g.state, g.outcome, g.resource_id])).toEqual([
      ['finished', 'SUCCEEDED', firstPayment.id],
      ['finished', 'SUCCEEDED', latePayment.id],
    ]);
  });

  it('counts a retry after the window as an expired retry at a process that never met the key', async () => {
    const SEALED = testOperation('sealed');
    const engine = stack.app.services.deps.engine;
    const scope = { tenantId: stack.tenantIds.a, operation: SEALED, key: 'expired-elsewhere' };
    const admit = (by: IdempotencyEngine, resourceId: string) =>
      by.admit({ scope, command: 'same', first: { to: 'sealing', resourceId, statements: [] } });
    const first = await admit(engine, '00000000-0000-4000-8000-0000000000e1');
    if (first.kind !== 'owned') throw new Error(`first admission: ${first.kind}`);
    const { expiresAt } = await first.request.finish({ done: true }, []);
    await waitUntil(async () => (await dbNow(stack.db)) > expiresAt.getTime(), {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'the database clock to pass the key’s expiry',
    });
    // Another process has not met the key: it inserts before reading, and only the insert can
    // tell that the scope had a generation before, all of it expired.
    const otherProcess = new IdempotencyEngine({
      ...engine.deps,
      admissions: new AdmissionsInFlight(),
      recentScopes: new RecentScopes(),
    });
    const before = await metricsText();
    const late = await admit(otherProcess, '00000000-0000-4000-8000-0000000000e2');
    expect(late.kind).toBe('owned');
    const after = await metricsText();
    const outcome = (name: string) =>
      `idempotency_requests_total{service="payments",operation="sealed",outcome="${name}"}`;
    const expired = 'idempotency_expired_retries_total{service="payments",operation="sealed"}';
    expect(metricValue(after, expired) - metricValue(before, expired)).toBe(1);
    expect(metricValue(after, outcome('expired_retry'))).toBe(
      metricValue(before, outcome('expired_retry')) + 1,
    );
    expect(metricValue(after, outcome('executed'))).toBe(metricValue(before, outcome('executed')));
    expect(await generationsOf(stack.db, 'expired-elsewhere')).toHaveLength(2);
  });

  it('never treats an unfinished key as new, however far past its expiry', async () => {
    stack.app.faults.arm('createPayment.provider_charge.before-call', { kind: 'throw' });
    const stuck = await createPaymentOn(stack, paymentInput('win-stuck'));
    expect(stuck.body.errors).toBeDefined();
    stack.app.faults.disarm('createPayment.provider_charge.before-call');
    // Its window passed long ago, and its lease is still live: a retry is told to wait.
    await stack.db.query(
      `UPDATE idempotency_keys SET expires_at = now() - interval '2 days' WHERE key = 'win-stuck'`,
    );
    const retry = await createPaymentOn(stack, paymentInput('win-stuck'));
    expect(errorCodeOf(retry)).toBe('IDEMPOTENCY_KEY_IN_USE');
    const generations = await generationsOf(stack.db, 'win-stuck');
    expect(generations).toHaveLength(1);
    expect(generations[0]!.state).toBe('started');

    // When it finally finishes, its answer gets a whole window from then: a retry right after
    // replays it instead of charging again.
    await stack.db.query(
      `UPDATE idempotency_keys SET lease_expires_at = now() WHERE key = 'win-stuck'`,
    );
    const resumed = await createPaymentOn(stack, paymentInput('win-stuck'));
    const payment = paymentOf(resumed);
    const { expiresAt } = (
      resumed.body.data?.['createPayment'] as { idempotency: { expiresAt: string } }
    ).idempotency;
    expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());
    const replay = await createPaymentOn(stack, paymentInput('win-stuck'));
    expect(paymentOf(replay).id).toBe(payment.id);
    expect(stack.sandbox.charges({ reference: 'win-stuck' })).toHaveLength(1);
    expect(await generationsOf(stack.db, 'win-stuck')).toHaveLength(1);
  });
});

describe('dedupe across a partition boundary', () => {
  const STRADDLE = testOperation('straddle');

  it('admits one of two first requests whose rows would fall in different partitions', async () => {
    // A boundary a few seconds past the first request's expiry (room for a loaded machine to
    // start the first admission before it): the second request, admitted after the
    // boundary has passed, would put its row in the next partition, where no unique index can
    // see the first. Only the scope lock and the live-row check stop it.
    const now = await dbNow(stack.db);
    const day = Math.floor(now / DAY_MS) * DAY_MS;
    const boundary = now + TTL_SECONDS * 1000 + BOUNDARY_MARGIN_MS;
    await layOutPartitions(stack.db, [day - DAY_MS, boundary, day + 3 * DAY_MS]);
    const engine = stack.app.services.deps.engine;
    const scope = { tenantId: stack.tenantIds.a, operation: STRADDLE, key: 'straddle-1' };
    const command = 'same-command';
    let executions = 0;
    /** A first phase that only counts its executions: a second one would mean two owners. */
    const countedFirstPhase = (resourceId: string) => ({
      to: 'done_once' as const,
      resourceId,
      work: () => {
        executions += 1;
        return Promise.resolve();
      },
    });
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstInside!: () => void;
    const firstIsInside = new Promise<void>((resolve) => (firstInside = resolve));

    const first = engine.admit({
      scope,
      command,
      first: {
        to: 'done_once',
        resourceId: '00000000-0000-4000-8000-000000000001',
        work: async () => {
          executions += 1;
          firstInside();
          await firstHeld; // admission transaction open: its row is not committed yet
        },
      },
    });
    await firstIsInside;
    await waitUntil(async () => (await dbNow(stack.db)) + TTL_SECONDS * 1000 > boundary + 100, {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'the database clock to cross the boundary',
    });
    // From another process: one process's own duplicates wait for its admission in memory
    // (AdmissionsInFlight), and never reach the scope lock this test is about.
    const otherProcess = new IdempotencyEngine({
      ...engine.deps,
      admissions: new AdmissionsInFlight(),
      recentScopes: new RecentScopes(),
    });
    const second = otherProcess.admit({
      scope,
      command,
      first: countedFirstPhase('00000000-0000-4000-8000-000000000002'),
    });
    await waitUntil(
      async () =>
        (
          await stack.db.query(
            `SELECT 1 FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          )
        ).rowCount === 1,
      { timeoutMs: 10_000, intervalMs: 20, what: 'the second admission to wait on the scope' },
    );
    releaseFirst();
    const [a, b] = await Promise.all([first, second]);

    expect(a.kind).toBe('owned');
    expect(b.kind).toBe('in_use');
    expect(executions).toBe(1);
    const generations = await generationsOf(stack.db, 'straddle-1');
    expect(generations).toHaveLength(1);
    expect(generations[0]!.partition, 'the first admission began after the boundary').toBe(
      'idempotency_keys_t0',
    );

    // A retry after the boundary, once the first has finished, replays it: still one row.
    if (a.kind === 'owned') await a.request.finish({ done: true }, () => Promise.resolve());
    const retry = await engine.admit({
      scope,
      command,
      first: countedFirstPhase('00000000-0000-4000-8000-000000000003'),
    });
    expect(retry.kind).toBe('replay');
    expect(executions).toBe(1);
    expect(await generationsOf(stack.db, 'straddle-1')).toHaveLength(1);
  });
});

describe('partition maintenance', () => {
  beforeEach(async () => {
    await dailyPartitionsSince(stack.db, 30);
  });

  it('drops answers after the window and metadata after its own retention, by partition', async () => {
    const done = paymentOf(await createPaymentOn(stack, paymentInput('ret-split')));
    // Age the request: its window ended two days ago (the UPDATE moves the rows to the
    // partitions of that day, as if they had been written then).
    await stack.db.query(
      `WITH k AS (UPDATE idempotency_keys SET expires_at = now() - interval '2 days'
                   WHERE key = 'ret-split' RETURNING id, expires_at)
       UPDATE idempotency_responses r SET expires_at = k.expires_at FROM k WHERE r.request_id = k.id`,
    );
    const run = await maintainPartitions(stack.app.services.deps.pool, POLICY);
    expect(run.result).toBe('done');
    // Answers: every partition wholly in the past is gone. Metadata: only those past retention.
    expect(run.dropped.filter((n) => n.startsWith('idempotency_responses_')).length).toBe(30);
    expect(run.dropped.filter((n) => n.startsWith('idempotency_keys_')).length).toBe(23);
    const [generation] = await generationsOf(stack.db, 'ret-split');
    expect(generation).toMatchObject({
      state: 'finished',
      outcome: 'SUCCEEDED',
      resource_id: done.id,
      has_body: false,
    });
    const { rows } = await stack.db.query<{ request_hash: Buffer; created_at: Date }>(
      `SELECT request_hash, created_at FROM idempotency_keys WHERE key = 'ret-split'`,
    );
    expect(rows[0]!.request_hash.length).toBe(32);

    // A retry now is a new request (the metadata lets it be counted as an expired retry).
    const again = paymentOf(await createPaymentOn(stack, paymentInput('ret-split')));
    expect(again.id).not.toBe(done.id);

    // Once the metadata's retention has passed too (a day, here), its partition goes.
    const later = await maintainPartitions(stack.app.services.deps.pool, {
      ...POLICY,
      metadataRetentionSeconds: 86_400,
    });
    expect(later.dropped.length).toBeGreaterThan(0);
    const left = await generationsOf(stack.db, 'ret-split');
    expect(left.map((g) => g.resource_id)).toEqual([again.id]);
  });

  it('never drops an unfinished request: it moves out of the partition, and still completes', async () => {
    stack.app.faults.arm('createPayment.provider_charge.before-call', { kind: 'throw' });
    const states = ['ret-started', 'ret-unknown'];
    for (const key of states) await createPaymentOn(stack, paymentInput(key));
    stack.app.faults.disarm('createPayment.provider_charge.before-call');
    await logAdmissionOf(states);
    await stack.db.query(`UPDATE idempotency_keys SET state = 'unknown', lease_expires_at = NULL
                           WHERE key = 'ret-unknown'`);
    // Nobody holds the started one any more: its owner's lease ran out (a live one: below).
    await stack.db.query(`UPDATE idempotency_keys SET lease_expires_at = now() - interval '1 second'
                           WHERE key = 'ret-started'`);
    // Age both, and a finished one, past metadata retention: their partition is droppable.
    await createPaymentOn(stack, paymentInput('ret-finished'));
    await stack.db.query(
      `WITH k AS (UPDATE idempotency_keys SET expires_at = now() - interval '20 days'
                   WHERE key = ANY($1) RETURNING id, expires_at)
       UPDATE idempotency_phase_log l SET expires_at = k.expires_at FROM k WHERE l.request_id = k.id`,
      [[...states, 'ret-finished']],
    );
    await stack.db.query(
      `UPDATE idempotency_responses r SET expires_at = now() - interval '20 days'
         FROM idempotency_keys k WHERE k.key = 'ret-finished' AND r.request_id = k.id`,
    );

    const run = await maintainPartitions(stack.app.services.deps.pool, POLICY);
    expect(run.movedUnfinished).toBe(2);
    for (const key of states) {
      const [generation] = await generationsOf(stack.db, key);
      expect(generation, key).toBeDefined();
      expect(generation!.expires_at.getTime()).toBeGreaterThan(Date.now());
      const { rows } = await stack.db.query(
        'SELECT recovery_point FROM idempotency_phase_log WHERE key = $1',
        [key],
      );
      expect(rows.map((r: { recovery_point: string }) => r.recovery_point)).toEqual([
        'provider_charge_sent',
      ]);
    }
    expect(await generationsOf(stack.db, 'ret-finished')).toEqual([]);

    // The moved request is still the same request: its lease expires, the worker resumes it.
    await stack.db.query(
      `UPDATE idempotency_keys SET lease_expires_at = now() - interval '1 second', next_attempt_at = NULL
        WHERE key = 'ret-started'`,
    );
    await stack.app.services.worker.sweepOnce();
    const [resumed] = await generationsOf(stack.db, 'ret-started');
    expect(resumed).toMatchObject({ state: 'finished', outcome: 'SUCCEEDED', has_body: true });
    expect(stack.sandbox.charges({ reference: 'ret-started' })).toHaveLength(1);
  });

  it('never moves a request from under a live owner: its partitions wait for a later run', async () => {
    // A request whose owner still holds its lease, aged past metadata retention with its log.
    stack.app.faults.arm('createPayment.provider_charge.before-call', { kind: 'throw' });
    await createPaymentOn(stack, paymentInput('ret-held'));
    stack.app.faults.disarm('createPayment.provider_charge.before-call');
    await logAdmissionOf(['ret-held']);
    await stack.db.query(
      `WITH k AS (UPDATE idempotency_keys SET expires_at = now() - interval '20 days',
                                              lease_expires_at = now() + interval '1 hour'
                   WHERE key = 'ret-held' RETURNING id, expires_at)
       UPDATE idempotency_phase_log l SET expires_at = k.expires_at FROM k WHERE l.request_id = k.id`,
    );
    const [held] = await generationsOf(stack.db, 'ret-held');

    // The owner names its row by its partition key (ownersRow): the row stays where it is, and
    // so do its partitions, the phase log's included.
    const run = await maintainPartitions(stack.app.services.deps.pool, POLICY);
    expect(run.movedUnfinished).toBe(0);
    expect(run.kept).toEqual([held!.partition, held!.partition.replace('_keys_', '_phase_log_')]);
    expect(run.dropped).not.toContain(held!.partition);
    expect(await generationsOf(stack.db, 'ret-held')).toEqual([held]);
    const { rows: logged } = await stack.db.query<{ partition: string }>(
      `SELECT tableoid::regclass::text AS partition FROM idempotency_phase_log WHERE request_id = $1`,
      [held!.id],
    );
    expect(logged).toEqual([{ partition: run.kept[1] }]);

    // Once the lease has run out, the next run moves the request and drops both.
    await stack.db.query(
      `UPDATE idempotency_keys SET lease_expires_at = now() - interval '1 second'
        WHERE key = 'ret-held'`,
    );
    const next = await maintainPartitions(stack.app.services.deps.pool, POLICY);
    expect(next.movedUnfinished).toBe(1);
    expect(next.kept).toEqual([]);
    expect(next.dropped).toEqual(expect.arrayContaining(run.kept));
    const [moved] = await generationsOf(stack.db, 'ret-held');
    expect(moved!.expires_at.getTime()).toBeGreaterThan(Date.now());
  });

  it('refuses a key with no partition to land in, keeping nothing, and reports the horizon', async () => {
    // Maintenance stalled for days: the newest partition ends today, before any new key's expiry.
    const today = Math.floor((await dbNow(stack.db)) / DAY_MS) * DAY_MS;
    await layOutPartitions(stack.db, [today - DAY_MS, today]);
    const input = paymentInput('ret-no-partition');
    const refused = await createPaymentOn(stack, input);
    expect(errorCodeOf(refused)).toBe('INTERNAL_SERVER_ERROR');
    expect(await generationsOf(stack.db, 'ret-no-partition')).toEqual([]);
    expect(stack.sandbox.charges({ reference: 'ret-no-partition' })).toEqual([]);
    const { rows: payments } = await stack.db.query(
      "SELECT 1 FROM payments WHERE reference = 'ret-no-partition'",
    );
    expect(payments).toEqual([]);

    // Maintenance fails (the database refuses DDL): the run fails, and the gauge still says that
    // new keys had a partition only until today less the TTL, already past.
    await stack.db.query(`CREATE FUNCTION refuse_ddl() RETURNS event_trigger LANGUAGE plpgsql
                            AS $$ BEGIN RAISE EXCEPTION 'DDL refused'; END $$`);
    await stack.db.query(`CREATE EVENT TRIGGER refuse_ddl ON ddl_command_start
                            WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION refuse_ddl()`);
    try {
      await expect(stack.app.services.maintainPartitions()).rejects.toThrow('DDL refused');
    } finally {
      await stack.db.query('DROP EVENT TRIGGER refuse_ddl');
      await stack.db.query('DROP FUNCTION refuse_ddl()');
    }
    const series = 'idempotency_partitions_insertable_until_timestamp_seconds{service="gateway"}';
    expect(metricValue(await metricsText(), series) * 1000).toBe(today - TTL_SECONDS * 1000);

    // After a run that works, the gauge says until when new keys have a partition:
    // the nearest table's newest partition less the TTL, a day (one daily partition) or more
    // beyond now.
    const started = await dbNow(stack.db);
    await stack.app.services.maintainPartitions();
    const until = metricValue(await metricsText(), series) * 1000;
    const { rows: tails } = await stack.db.query<{ reach: Date }>(
      `SELECT min(upper_bound) AS reach
         FROM (SELECT max(upper_bound) AS upper_bound FROM idempotency_partitions GROUP BY parent) t`,
    );
    expect(until).toBe(tails[0]!.reach.getTime() - TTL_SECONDS * 1000);
    const slack = partitionSlackSeconds(POLICY) * 1000;
    expect(slack).toBe(DAY_MS);
    expect(until).toBeGreaterThanOrEqual(started + slack);
    expect(until).toBeLessThan(started + slack + DAY_MS + 60_000);
    expect(
      metricValue(await metricsText(), 'idempotency_partitions_slack_seconds{service="gateway"}'),
    ).toBe(slack / 1000);

    // The refusal burned nothing: the same key, retried, is a new payment.
    expect(paymentOf(await createPaymentOn(stack, input)).status).toBe('SUCCEEDED');
    expect(stack.sandbox.charges({ reference: 'ret-no-partition' })).toHaveLength(1);
  });

  it('gives up creating a partition behind a long transaction, rather than queue traffic', async () => {
    const today = Math.floor((await dbNow(stack.db)) / DAY_MS) * DAY_MS;
    await layOutPartitions(stack.db, [today - DAY_MS, today]);
    const report = new pg.Client({ connectionString: database.url });
    await report.connect();
    try {
      // A long read (a report, pg_dump) holds ACCESS SHARE on the keys table until it ends.
      await report.query('BEGIN');
      await report.query('SELECT count(*) FROM idempotency_keys');
      const started = Date.now();
      await expect(maintainPartitions(stack.app.services.deps.pool, POLICY)).rejects.toMatchObject({
        code: '55P03',
      });
      expect(Date.now() - started).toBeLessThan(10_000);
      // Meanwhile nothing queued behind it: a lookup by key still answers.
      const lookup = await stack.db.query(
        "SELECT 1 FROM idempotency_keys WHERE tenant_id = gen_random_uuid() AND key = 'x'",
      );
      expect(lookup.rows).toEqual([]);
    } finally {
      await report.query('ROLLBACK');
      await report.end();
    }
    expect((await maintainPartitions(stack.app.services.deps.pool, POLICY)).result).toBe('done');
  });

  it('is safe from several processes at once: every partition made once, none lost', async () => {
    const today = Math.floor((await dbNow(stack.db)) / DAY_MS) * DAY_MS;
    await layOutPartitions(stack.db, [today - DAY_MS, today]);
    const pools = Array.from(
      { length: 4 },
      () => new pg.Pool({ connectionString: database.url, max: 2 }),
    );
    try {
      const runs = await Promise.all(
        pools.flatMap((pool) => [
          maintainPartitions(pool, POLICY),
          maintainPartitions(pool, POLICY),
        ]),
      );
      expect(runs.some((run) => run.result === 'done')).toBe(true);
      // Whatever the interleaving, afterwards the layout reaches the horizon with no gap.
      const final = await maintainPartitions(stack.app.services.deps.pool, POLICY);
      expect(final.created).toEqual([]);
      const { rows } = await stack.db.query<{ parent: string; gaps: number; n: number }>(
        `SELECT parent, count(*)::int AS n,
                count(*) FILTER (WHERE lower_bound <> prev)::int AS gaps
           FROM (SELECT parent, lower_bound,
                        lag(upper_bound) OVER (PARTITION BY parent ORDER BY lower_bound) AS prev
                   FROM idempotency_partitions) p
          GROUP BY parent ORDER BY parent`,
      );
      expect(rows.map((r) => r.gaps)).toEqual([0, 0, 0]);
      const { rows: attached } = await stack.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_inherits i
           JOIN pg_class c ON c.oid = i.inhparent
          WHERE c.relname = ANY($1)`,
        [PARTITIONED_TABLES],
      );
      expect(attached[0]!.n).toBe(rows.reduce((sum, r) => sum + r.n, 0));
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });
});

describe("the recovery worker's sweep", () => {
  it('stays an index scan of the unfinished rows, in every partition', async () => {
    await dailyPartitionsSince(stack.db, 3);
    // 60,000 finished requests over four days of partitions, and a few unfinished ones.
    await stack.db.query(
      `INSERT INTO idempotency_keys (tenant_id, operation, key, request_hash, state, recovery_point,
                                     outcome, expires_at)
       SELECT $1, 'payments.create.v1', 'plan-' || g, '\\x00', 'finished', 'finished', 'SUCCEEDED',
              now() - interval '3 days' + (g % 4) * interval '1 day'
         FROM generate_series(1, 60000) AS g`,
      [stack.tenantIds.a],
    );
    await stack.db.query(
      `INSERT INTO idempotency_keys (tenant_id, operation, key, request_hash, state, recovery_point,
                                     lease_expires_at, expires_at)
       SELECT $1, 'payments.create.v1', 'plan-open-' || g, '\\x00', 'started', 'provider_charge_sent',
              now() - interval '1 minute', now() + (g % 3) * interval '1 day'
         FROM generate_series(1, 20) AS g`,
      [stack.tenantIds.a],
    );
    // The mark passes them all, the unfinished ones parked (two moves: the first reads where
    // the sequence is, the second goes there once those inserts' transactions have ended).
    const { rows: last } = await stack.db.query<{ id: string }>(
      `SELECT max(id)::text AS id FROM idempotency_keys`,
    );
    await waitUntil(
      async () => BigInt((await moveLowWater(stack.db)) ?? '0') > BigInt(last[0]!.id),
      { timeoutMs: 20_000, intervalMs: 50, what: 'the low-water mark to pass the inserted rows' },
    );
    const { rows: parked } = await stack.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM idempotency_parked`,
    );
    expect(parked[0]!.n).toBeGreaterThanOrEqual(20);
    await stack.db.query('ANALYZE idempotency_keys');
    const { rows } = await stack.db.query<{ 'QUERY PLAN': unknown }>(
      `EXPLAIN (FORMAT JSON) ${CLAIM_STALE_KEYS}`,
      [30_000, 100, ['payments.create.v1']],
    );
    // A partition of a handful of rows is read whole (one page is cheaper than an index); the
    // ones that hold the finished bulk must be reached by index only: from the mark up, and the
    // parked ones by id.
    const { rows: sizes } = await stack.db.query<{ relname: string }>(
      `SELECT relname FROM pg_class WHERE relname LIKE 'idempotency_keys_t%' AND relkind = 'r'
          AND reltuples > 1000`,
    );
    const bulky = new Set(sizes.map((r) => r.relname));
    expect(bulky.size).toBe(4);
    const scans = scansOf(rows[0]!['QUERY PLAN']).filter((scan) => bulky.has(scan.relation));
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) {
      expect(scan.type, `${scan.relation}: ${scan.type}`).toMatch(/^(Index|Bitmap)/);
    }
    const claimed = await stack.db.query(CLAIM_STALE_KEYS, [30_000, 100, ['payments.create.v1']]);
    expect(
      claimed.rows.filter((r: { key: string }) => r.key.startsWith('plan-open-')),
    ).toHaveLength(20);
    await stack.db.query(`DELETE FROM idempotency_keys WHERE key LIKE 'plan-%'`);
  });
});

interface Scan {
  type: string;
  relation: string;
  index: string | undefined;
}

function scansOf(plan: unknown): Scan[] {
  const found: Scan[] = [];
  const visit = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    const relation = record['Relation Name'];
    const type = record['Node Type']; // absent on an Update's list of target tables
    if (typeof relation === 'string' && typeof type === 'string') {
      found.push({
        type,
        relation,
        index: typeof record['Index Name'] === 'string' ? record['Index Name'] : undefined,
      });
    }
    Object.values(record).forEach(visit);
  };
  visit(plan);
  return found;
}
