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
} from '../../lib/idempotency/idempotency.sql.ts';
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
        `EXPLAIN EXECUTE probe(${literals.join(', ')})`,
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

  it("on call's unfinished list: the unfinished-lease partial index, not every key", async () => {
    const plan = await genericPlan(LIST_UNFINISHED, [`'{started,unknown}'`, '50']);
    expect(plan).toContain('lease_expires_at_idx');
    expect(plan).not.toMatch(/Scan using \S*(tenant_id_operation_key|pkey) on idempotency_keys/);
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
      `'k2'`,
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
 * one holds its row opens them all on every call (ADR 0052). An owner knows its row's primary
 * key, partition key included: its generic plans prune, at executor startup, to the one
 * partition that holds the row.
 */
describe("an owner's statements open only its row's partition", () => {
  const DAYS = 4;
  let expiresAt: string;
  let partitions: number;

  beforeAll(async () => {
    const { rows } = await pool.query<{ upper_bound: Date }>(
      `SELECT max(upper_bound) AS upper_bound FROM idempotency_partitions
        WHERE parent = 'idempotency_keys'`,
    );
    const from = rows[0]!.upper_bound.getTime();
    const day = 86_400_000;
    for (let i = 0; i < DAYS; i++) {
      await pool.query(
        `CREATE TABLE idempotency_keys_plan_${i} PARTITION OF idempotency_keys
           FOR VALUES FROM ('${new Date(from + i * day).toISOString()}')
                        TO ('${new Date(from + (i + 1) * day).toISOString()}')`,
      );
    }
    expiresAt = `'${new Date(from + 1.5 * day).toISOString()}'`;
    const counted = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'idempotency_keys'::regclass`,
    );
    partitions = counted.rows[0]!.n;
  });

  const fence = [TENANT, `'payments.create.v1'`, `'k-1'`, '1', `'provider_charge_sent'`];
  const owners: [string, string, string[]][] = [
    ['advancing', ADVANCE_KEY, [...fence, `'provider_charged'`, '30000']],
    ['finishing', FINISH_KEY, [...fence, `'{}'`, '1', `'inline'`, `'SUCCEEDED'`, '86400']],
    ['locking', LOCK_KEY, fence],
    ['a heartbeat', HEARTBEAT_KEY, [...fence.slice(0, 4), '30000']],
    ['a release', RELEASE_KEY, [...fence.slice(0, 4), `'timeout'`, '3', '100', '1000']],
  ];
  it.each(owners)('%s', async (_name, text, values) => {
    const plan = await genericPlan(text, [...values, '42', expiresAt]);
    expect(partitions).toBeGreaterThan(DAYS);
    expect(plan).toContain(`Subplans Removed: ${partitions - 1}`);
    // PostgreSQL 15 still names every partition as a possible target of an UPDATE; only the
    // one that survived pruning is scanned.
    const scanned = plan.match(/Scan .*? on idempotency_keys_\w+/g) ?? [];
    expect(scanned.map((line) => line.split(' on ')[1])).toEqual(['idempotency_keys_plan_1']);
  });
});
