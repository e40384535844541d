import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../lib/db/pool.ts';
import {
  ADVANCE_KEY,
  FINISH_KEY,
  HEARTBEAT_KEY,
  LOCK_KEY,
  RELEASE_KEY,
  SELECT_KEY,
  SELECT_LIVE_KEY,
  SELECT_UNKNOWN_KEYS,
  UNFINISHED_SUMMARY,
  CLAIM_STALE_KEYS,
} from '../../lib/idempotency/idempotency.sql.ts';
import { MOVE_UNFINISHED_KEYS } from '../../lib/idempotency/retention.sql.ts';
import { LIST_UNFINISHED } from '../../lib/idempotency/inspection.sql.ts';
import { SELECT_ANSWERS_TO_RESEAL } from '../../lib/idempotency/reseal-answers.sql.ts';
import { RECORD_FAILURE } from '../../lib/outbox/remote-deliveries.sql.ts';
import {
  LIST_DELIVERIES_AFTER,
  LIST_DELIVERIES_FIRST_PAGE,
} from '../../services/notifications/manage-endpoints.sql.ts';
import {
  TURN_REFERENCE_GUARD_OFF,
  TURN_REFERENCE_GUARD_ON,
} from '../../services/payments/payments.sql.ts';
import { useTestDatabase } from '../support/test-database.ts';

/**
 * The request and outbox pools plan each prepared statement once, for any values
 * (plan_cache_mode = force_generic_plan; lib/db/pool.ts, ADR 0047). A statement whose predicate
 * only a parameter's value makes provable (`CASE WHEN $2 …`, `state = ANY($1)` for a partial
 * index on `state <> 'finished'`, `$3 IS NULL OR …`) then gets a plan that cannot use the index
 * meant for it, and reads a whole tenant, table or partition on every call. This file asks each
 * such statement's generic plan, on a pool of the request path's kind, whether it reaches its
 * index. Sequential scans are disabled so that the answer does not depend on table sizes: the
 * tables here are empty, and on empty tables a sequential scan would win on cost alone.
 */
const database = useTestDatabase('generic-plans');
let pool: pg.Pool;

beforeAll(() => {
  pool = createPool({ connectionString: database.url, max: 1, applicationName: 'plan-test' });
});
afterAll(async () => {
  await pool?.end();
});

/**
 * The generic plan of `text` as this pool's sessions would run it, for parameters given as SQL
 * literals. EXPLAIN without ANALYZE: a write is planned, never run.
 */
async function genericPlan(text: string, literals: string[]): Promise<string> {
  const client = await pool.connect();
  try {
    await client.query('SET enable_seqscan = off');
    await client.query(`PREPARE probe AS ${text}`);
    try {
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN EXECUTE probe${literals.length > 0 ? `(${literals.join(', ')})` : ''}`,
      );
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    } finally {
      await client.query('DEALLOCATE probe');
      await client.query('RESET enable_seqscan');
    }
  } finally {
    client.release();
  }
}

const TENANT = `'00000000-0000-4000-8000-0000000000a1'`;

describe("each statement's one plan reaches the index meant for it", () => {
  it('the pool plans for any values', async () => {
    const { rows } = await pool.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode');
    expect(rows[0]?.plan_cache_mode).toBe('force_generic_plan');
  });

  it("the key lookup: the scope's index, with every key column", async () => {
    const plan = await genericPlan(SELECT_KEY, [TENANT, `'{payments.create.v1}'`, `'k-1'`]);
    // The operation may be a condition or a filter: the key's columns reach the index either way.
    expect(plan).toMatch(
      /Index Cond: \(\(tenant_id = \$1\) AND (\(operation = ANY \(\$2\)\) AND )?\(key = \$3\)\)/,
    );
  });

  // The unfinished requests (migrations/0027): the keys from the low-water mark up, by their
  // primary key, and the parked ones, by id. Never every key of every partition.
  const readsUnfinishedOnly = (plan: string) => {
    expect(plan).toMatch(/Index Cond: \(id >= \$\d+\)/);
    expect(plan).toMatch(/Scan \S* ?on idempotency_parked/);
    expect(plan).not.toMatch(/Seq Scan on idempotency_keys/);
    expect(plan).not.toMatch(/Scan using \S*tenant_id_operation_key\S* on idempotency_keys/);
  };

  it("on call's unfinished list: the unfinished requests only", async () => {
    readsUnfinishedOnly(await genericPlan(LIST_UNFINISHED, [`'{started,unknown}'`, '50']));
  });

  it("the sweep's claim, the gauges and the unknown outcomes: the unfinished requests only", async () => {
    readsUnfinishedOnly(
      await genericPlan(CLAIM_STALE_KEYS, ['30000', '16', `'{payments.create.v1}'`]),
    );
    readsUnfinishedOnly(await genericPlan(UNFINISHED_SUMMARY, []));
    readsUnfinishedOnly(await genericPlan(SELECT_UNKNOWN_KEYS, [`'{payments.create.v1}'`, '10']));
  });

  it("retention's move of unfinished requests: the unfinished requests only", async () => {
    readsUnfinishedOnly(await genericPlan(MOVE_UNFINISHED_KEYS, [`'p'`, '86400']));
  });

  it("turning the reference guard off: only the claims, on the guard's partial index", async () => {
    const plan = await genericPlan(TURN_REFERENCE_GUARD_OFF, [TENANT]);
    expect(plan).toContain('payments_guarded_reference_uq');
    expect(plan).not.toContain('payments_tenant_created_ix');
  });

  it('turning it on still plans (it visits the live payments with a reference)', async () => {
    const plan = await genericPlan(TURN_REFERENCE_GUARD_ON, [TENANT]);
    expect(plan).toContain('Update on payments');
  });

  it('a batch of answers to re-seal: from its cursor in key order, each key by its own', async () => {
    const plan = await genericPlan(SELECT_ANSWERS_TO_RESEAL, [
      `'\\x01026b32'::bytea`,
      '1000',
      `'2026-12-06 00:00:00+00'`,
      '500',
    ]);
    expect(plan).toMatch(/Index Cond: \(ROW\(request_id, expires_at\) > ROW\(\$2, \$3\)\)/);
    // Each answer's key through its primary key, not every key joined to every answer.
    expect(plan).toMatch(
      /Index Cond: \(\(id = r\.request_id\) AND \(expires_at = r\.expires_at\)\)/,
    );
    expect(plan).not.toMatch(/(Hash|Merge) Join|-> {2}Sort /);
  });

  it("a remote target's failure: the remote due index, not the whole deliveries table", async () => {
    const plan = await genericPlan(RECORD_FAILURE, [TENANT, `'webhook:w1'`, '500', '60000', '3']);
    expect(plan).toContain('outbox_deliveries_remote_due_ix');
  });

  it("a later page of deliveries starts at its cursor in the endpoint's index", async () => {
    const after = await genericPlan(LIST_DELIVERIES_AFTER, [TENANT, `'webhook:w1'`, '21', `'e1'`]);
    expect(after).toMatch(/Index Cond: .*event_id > \$4/);
    const first = await genericPlan(LIST_DELIVERIES_FIRST_PAGE, [TENANT, `'webhook:w1'`, '21']);
    expect(first).toContain('outbox_deliveries_webhook_ix');
  });
});

/**
 * A week of kept metadata is a week of daily partitions, and a statement that cannot say which
 * one holds its row opens them all on every call (ADR 0052). Here the keys table is laid out as
 * a week leaves it: days behind now, holding metadata only, today, and days ahead.
 */
describe('a lookup opens only the partitions that can hold its row', () => {
  const BEHIND = 4;
  const AHEAD = 3;
  const DAY_MS = 86_400_000;
  /** The partition of the day `offset` days from today's. */
  const dayPartition = (offset: number) => `idempotency_keys_plan_${offset + BEHIND}`;
  let expiresAt: string;

  beforeAll(async () => {
    const { rows: old } = await pool.query<{ name: string }>(
      `SELECT inhrelid::regclass::text AS name FROM pg_inherits
        WHERE inhparent = 'idempotency_keys'::regclass`,
    );
    for (const { name } of old) await pool.query(`DROP TABLE ${name}`);
    const { rows } = await pool.query<{ today: Date }>(`SELECT date_trunc('day', now()) AS today`);
    const today = rows[0]!.today.getTime();
    for (let offset = -BEHIND; offset <= AHEAD; offset++) {
      const at = (days: number) => new Date(today + days * DAY_MS).toISOString();
      await pool.query(
        `CREATE TABLE ${dayPartition(offset)} PARTITION OF idempotency_keys
           FOR VALUES FROM ('${at(offset)}') TO ('${at(offset + 1)}')`,
      );
    }
    expiresAt = `'${new Date(today + 1.5 * DAY_MS).toISOString()}'`;
  });

  /** The partitions of idempotency_keys the plan scans, and how many it left out. */
  const scansOf = (plan: string) => ({
    // PostgreSQL 15 still names every partition as a possible target of an UPDATE; only those
    // that survived pruning are scanned.
    scanned: (plan.match(/Scan .*? on idempotency_keys_\w+/g) ?? []).map(
      (line) => line.split(' on ')[1],
    ),
    removed: Number(/Subplans Removed: (\d+)/.exec(plan)?.[1] ?? 0),
  });

  const fence = [TENANT, `'payments.create.v1'`, `'k-1'`, '1', `'provider_charge_sent'`];
  const owners: [string, string, string[]][] = [
    ['advancing', ADVANCE_KEY, [...fence, `'provider_charged'`, '30000']],
    ['finishing', FINISH_KEY, [...fence, `'{}'`, '1', `'inline'`, `'SUCCEEDED'`, '86400']],
    ['locking', LOCK_KEY, fence],
    ['a heartbeat', HEARTBEAT_KEY, [...fence.slice(0, 4), '30000']],
    ['a release', RELEASE_KEY, [...fence.slice(0, 4), `'timeout'`, '3', '100', '1000']],
  ];
  it.each(owners)(
    "an owner's statement, %s: its row's partition alone",
    async (_, text, values) => {
      const plan = await genericPlan(text, [...values, '42', expiresAt]);
      expect(scansOf(plan)).toEqual({ scanned: [dayPartition(1)], removed: BEHIND + AHEAD });
    },
  );

  it("a replay's first look: today's partition and those ahead, none of metadata only", async () => {
    const plan = await genericPlan(SELECT_LIVE_KEY, [TENANT, `'{payments.create.v1}'`, `'k-1'`]);
    const ahead = Array.from({ length: AHEAD + 1 }, (_, day) => dayPartition(day));
    const { scanned, removed } = scansOf(plan);
    expect({ scanned: scanned.sort(), removed }).toEqual({
      scanned: ahead.sort(),
      removed: BEHIND,
    });
  });

  it('the full lookup, for a key most likely new or one the first look missed: every day', async () => {
    const plan = await genericPlan(SELECT_KEY, [TENANT, `'{payments.create.v1}'`, `'k-1'`]);
    expect(scansOf(plan).scanned).toHaveLength(BEHIND + 1 + AHEAD);
  });
});
