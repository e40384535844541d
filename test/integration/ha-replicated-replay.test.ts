/**
 * A replay answers only from a row the synchronous standby holds, on a real pg_auto_failover
 * formation (scripts/ha/formation.sh).
 *
 * A backend ended from outside while its COMMIT waits for the standby (an operator's
 * pg_terminate_backend, the chaos suite's backend kills) leaves its commit visible on the
 * primary alone. A retry that replayed from it would acknowledge a payment that a failover then
 * undoes. Here the primary's WAL senders are held, so the standby hears nothing while every node
 * stays healthy to the monitor; a key is finished, its commit's backend ended, and a retry of
 * the same request must wait for the standby before it replays (docs/decisions/0074).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../migrations/migrate.ts';
import { CommitUnconfirmedError } from '../../lib/db/lost-session.ts';
import { defineOperation } from '../../lib/idempotency/operation.ts';
import type { Admission } from '../../lib/idempotency/engine.ts';
import { startFormation, type Formation, type NodeName } from '../support/ha-formation.ts';
import { startTestStack, type TestStack } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';

const DATABASE = 'pgw_ha_replay';
const OPERATION = defineOperation({
  id: 'tests.replicated-replay.v1',
  publicName: 'replicatedReplay',
  service: 'payments',
  answerVersion: 1,
  outcomeOf: () => 'done',
});

let formation: Formation;
let primary: NodeName;
let standby: NodeName;
let stack: TestStack;
let admin: pg.Client;

beforeAll(async () => {
  formation = await startFormation();
  primary = (await formation.primary())!;
  standby = primary === 'node_1' ? 'node_2' : 'node_1';
  const setup = new pg.Client({ connectionString: formation.nodeUrl(primary) });
  await setup.connect();
  await setup.query(`CREATE DATABASE ${DATABASE}`);
  await setup.end();
  // The primary alone, by its own URL: nothing here fails over, and the test stack's own pool
  // takes one host.
  const url = formation.nodeUrl(primary, DATABASE);
  await migrateDatabase(url);
  stack = await startTestStack({ databaseUrl: url });
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
}, 300_000);

afterAll(async () => {
  await formation?.holdWal(primary, false).catch(() => undefined);
  await admin?.end().catch(() => undefined);
  await stack?.stop();
  await formation?.stop();
}, 60_000);

const scopeOf = (key: string) => ({ tenantId: stack.tenantIds.a, operation: OPERATION, key });

function admit(key: string, resourceId: string): Promise<Admission> {
  return stack.app.services.deps.engine.admit({
    scope: scopeOf(key),
    command: 'same',
    first: { to: 'sealing', resourceId, statements: [] },
  });
}

/** The pid of a gateway session whose statement names `query` and waits for the standby. */
function waitingForStandby(query: string, end: boolean): Promise<number> {
  return waitUntil(
    async () => {
      const { rows } = await admin.query<{ pid: number }>(
        `SELECT pid, CASE WHEN $2 THEN pg_terminate_backend(pid) END AS ended
           FROM pg_stat_activity
          WHERE application_name = 'payments-services' AND wait_event = 'SyncRep'
            AND query LIKE $1
          LIMIT 1`,
        [`%${query}%`, end],
      );
      return rows[0]?.pid;
    },
    { timeoutMs: 10_000, what: `a gateway session waiting for the standby: ${query}` },
  );
}

async function finishedOn(node: NodeName, key: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: formation.nodeUrl(node, DATABASE) });
  await client.connect();
  try {
    const { rowCount } = await client.query(
      `SELECT 1 FROM idempotency_keys WHERE key = $1 AND state = 'finished'`,
      [key],
    );
    return rowCount === 1;
  } finally {
    await client.end();
  }
}

/**
 * Finishes `key`'s first request while the standby hears nothing, and ends the backend of that
 * commit from outside: the key is finished on the primary alone, and visible there. `then` runs
 * with the senders still held; `release` lets them go.
 */
async function withFinishOnPrimaryAlone(
  key: string,
  then: (release: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const first = await admit(key, '00000000-0000-4000-8000-00000000a001');
  if (first.kind !== 'owned') throw new Error(`first admission: ${first.kind}`);
  await formation.holdWal(primary, true);
  let held = true;
  const release = async () => {
    if (held) await formation.holdWal(primary, false);
    held = false;
  };
  try {
    // The owner never hears of its commit: it fences, and waits for the standby like the rest.
    first.request.finish({ done: true }, []).catch(() => undefined);
    await waitingForStandby('', true);
    await waitUntil(async () => (await finishedOn(primary, key)) || undefined, {
      timeoutMs: 10_000,
      what: 'the ended commit, visible on the primary alone',
    });
    expect(await finishedOn(standby, key)).toBe(false);
    await then(release);
  } finally {
    await release();
  }
}

describe('a replay on a formation', () => {
  it('answers from a finished key only once the standby holds it', async () => {
    await withFinishOnPrimaryAlone('left-alone', async (release) => {
      let settled = false;
      const replay = admit('left-alone', '00000000-0000-4000-8000-00000000a002').finally(
        () => (settled = true),
      );
      replay.catch(() => undefined);
      // The retry reads the key again with a fence, and the fence waits for the standby.
      await waitingForStandby("'read-back'", false);
      expect(settled).toBe(false);
      expect(await finishedOn(standby, 'left-alone')).toBe(false);
      await release();
      expect((await replay).kind).toBe('replay');
      expect(await finishedOn(standby, 'left-alone')).toBe(true);
    });
  }, 60_000);

  it('fails as unconfirmed, not replayed, when the standby’s copy cannot be proven', async () => {
    await withFinishOnPrimaryAlone('unproven', async (release) => {
      const replay = admit('unproven', '00000000-0000-4000-8000-00000000a003');
      replay.catch(() => undefined);
      // The retry's fence ended while it waits: nothing proves the standby has the key.
      await waitingForStandby("'read-back'", true);
      expect(await finishedOn(standby, 'unproven')).toBe(false);
      // Released, so the lost read's own clean-up need not wait out the pool's query timeout.
      await release();
      await expect(replay).rejects.toBeInstanceOf(CommitUnconfirmedError);
    });
  }, 60_000);
});
