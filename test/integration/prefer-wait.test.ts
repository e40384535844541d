import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../app/app.ts';
import { errorCodeOf, graphql, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { useTestDatabase } from '../support/test-database.ts';
import {
  INTERNAL_TOKEN,
  keyRowOf,
  paymentInput,
  startTestStack,
  TENANT_A,
  testKeyring,
  type TestStack,
} from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * `Prefer: wait=N` (docs/api.md §1): a duplicate of a request in flight waits for the first
 * request's outcome and answers its stored result, woken by PostgreSQL LISTEN/NOTIFY when the
 * first request commits. There is no polling to fall back on: a wake-up that never comes ends
 * the wait at its deadline with a 409, so each test below fails if the wake-up is lost.
 *
 * The sandbox's pm_card_slow answers after SLOW_MS; every wait asked for is longer than that,
 * except where the wait is meant to run out.
 */
const SLOW_MS = 2_500;
const PROVIDER_TIMEOUT_MS = 5_000;
/**
 * Longer than any wait: a waiter also re-reads its key when the owner's lease runs out (an owner
 * that died wakes nobody), and that must not stand in for the wake-up these tests are about.
 */
const LEASE_MS = 30_000;

const database = useTestDatabase('prefer-wait');
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({
    databaseUrl: database.url,
    sandbox: { slowMs: SLOW_MS },
    app: { providerTimeoutMs: PROVIDER_TIMEOUT_MS, leaseMs: LEASE_MS },
  });
});
afterAll(async () => {
  await stack?.stop();
});

let counter = 0;
function slowPayment(): Record<string, unknown> {
  counter += 1;
  return paymentInput(`wait-${counter}-${Date.now().toString(36)}`, {
    paymentMethod: 'pm_card_slow',
  });
}

function create(
  url: string,
  input: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<GraphQLAnswer> {
  return graphql(url, {
    apiKey: TENANT_A.apiKey,
    query: CREATE_PAYMENT,
    variables: { input },
    headers,
  });
}

/** Until the first request holds its key: a duplicate sent now finds it in flight. */
async function inFlight(input: Record<string, unknown>): Promise<void> {
  await waitUntil(
    async () =>
      (await keyRowOf(stack.db, input['idempotencyKey'] as string))?.['state'] === 'started',
    { timeoutMs: 5_000, intervalMs: 20, what: 'the first request’s key row' },
  );
}

/** Until a duplicate has marked the key as waited for: it waits from now on. */
async function waitedFor(input: Record<string, unknown>): Promise<void> {
  await waitUntil(
    async () => (await keyRowOf(stack.db, input['idempotencyKey'] as string))?.['waiting'] === true,
    { timeoutMs: 5_000, intervalMs: 20, what: 'a duplicate to mark the key as waited for' },
  );
}

async function waits(outcome: string): Promise<number> {
  const text = await (await fetch(`${stack.app.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('idempotency_waits_total{') &&
        l.includes('operation="createPayment"') &&
        l.includes(`outcome="${outcome}"`),
    );
  return Number(line?.split(' ').at(-1) ?? Number.NaN);
}

function withoutIdempotencyTimes(answer: GraphQLAnswer): string {
  return JSON.stringify(answer.body);
}

describe('a duplicate that prefers to wait for a key in flight', () => {
  it('answers the stored result, byte-equal to a later replay, and says how long it would wait', async () => {
    const input = slowPayment();
    const replayedBefore = await waits('replayed');
    const first = create(stack.app.url, input);
    await inFlight(input);
    const waited = await create(stack.app.url, input, { prefer: 'wait=10' });
    const original = await first;

    expect(waited.status).toBe(200);
    expect(waited.headers.get('idempotent-replayed')).toBe('true');
    // Capped at a provider call and a probe (2 × PROVIDER_TIMEOUT_MS), and at 10 s.
    expect(waited.headers.get('preference-applied')).toBe('wait=10');
    expect(paymentOf(waited).id).toBe(paymentOf(original).id);
    const later = await create(stack.app.url, input);
    expect(withoutIdempotencyTimes(waited)).toBe(withoutIdempotencyTimes(later));
    expect(await waits('replayed')).toBe(replayedBefore + 1);
  });

  it('without Prefer, is answered IDEMPOTENCY_KEY_IN_USE at once, as before', async () => {
    const input = slowPayment();
    const first = create(stack.app.url, input);
    await inFlight(input);
    const refused = await create(stack.app.url, input);
    expect(refused.status).toBe(409);
    expect(errorCodeOf(refused)).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(refused.headers.get('preference-applied')).toBeNull();
    expect((await keyRowOf(stack.db, input['idempotencyKey'] as string))?.['waiting']).toBe(false);
    await first;
  });

  it('whose wait runs out first is answered 409 with Retry-After, and the key is untouched', async () => {
    const input = slowPayment();
    const timedOutBefore = await waits('timed_out');
    const first = create(stack.app.url, input);
    await inFlight(input);
    const refused = await create(stack.app.url, input, { prefer: 'wait=1' });
    expect(refused.status).toBe(409);
    expect(errorCodeOf(refused)).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await waits('timed_out')).toBe(timedOutBefore + 1);
    expect(paymentOf(await first).status).toBe('SUCCEEDED');
  });

  it('loses no wake-up when the listening connection is killed: it listens again, then re-reads', async () => {
    const input = slowPayment();
    const first = create(stack.app.url, input);
    await inFlight(input);
    const waiting = create(stack.app.url, input, { prefer: 'wait=10' });
    await waitedFor(input);
    const killed = await stack.db.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE application_name = 'payments-key-watcher' AND datname = current_database()`,
    );
    expect(killed.rowCount).toBe(1);
    const original = await first;
    const waited = await waiting;
    expect(waited.status).toBe(200);
    expect(waited.headers.get('idempotent-replayed')).toBe('true');
    expect(paymentOf(waited).id).toBe(paymentOf(original).id);
    const listeners = await stack.db.query(
      `SELECT 1 FROM pg_stat_activity
        WHERE application_name = 'payments-key-watcher' AND datname = current_database()`,
    );
    expect(listeners.rowCount).toBe(1);
  });
});

describe('across gateways', () => {
  let second: App;
  beforeAll(async () => {
    second = await startApp({
      databaseUrl: database.url,
      pspUrl: stack.sandbox.url,
      internalToken: INTERNAL_TOKEN,
      keyring: testKeyring(),
      leaseMs: LEASE_MS,
      ttlSeconds: 86_400,
      recoveryIntervalMs: 60_000,
      providerTimeoutMs: PROVIDER_TIMEOUT_MS,
      startRecoveryWorker: false,
      logLevel: 'silent',
    });
  });
  afterAll(async () => {
    await second?.stop();
  });

  it('a duplicate on one gateway is woken by the first request finishing on another', async () => {
    const input = slowPayment();
    const first = create(stack.app.url, input);
    await inFlight(input);
    const waited = await create(second.url, input, { prefer: 'wait=10' });
    const original = await first;
    expect(waited.status).toBe(200);
    expect(waited.headers.get('idempotent-replayed')).toBe('true');
    expect(paymentOf(waited).id).toBe(paymentOf(original).id);
  });
});

describe('the wake-up trigger', () => {
  it('runs after the update: no trigger on key rows runs before one', async () => {
    // A BEFORE ROW trigger locks each row before it is updated, with a WAL record for the lock,
    // on every phase and finish of every request (migrations/0028, ADR 0063).
    const { rows } = await stack.db.query<{ name: string; before: boolean; row: boolean }>(
      `SELECT tgname AS name, (tgtype & 2) <> 0 AS before, (tgtype & 1) <> 0 AS row
         FROM pg_trigger WHERE tgrelid = 'idempotency_keys'::regclass AND NOT tgisinternal`,
    );
    expect(rows.sort((x, y) => x.name.localeCompare(y.name))).toEqual([
      { name: 'idempotency_keys_wake_waiters', before: false, row: true },
      { name: 'idempotency_keys_wake_waiters_moved', before: false, row: true },
    ]);
  });

  it('notifies for a marked row whose finish moves it to another partition', async () => {
    // Such an update is a DELETE and an INSERT, and fires no UPDATE trigger (a finish long after
    // admission, whose new window ends on another day).
    const far = 'idempotency_keys_test_far';
    await stack.db.query(
      `CREATE TABLE ${far} PARTITION OF idempotency_keys
         FOR VALUES FROM ('2100-01-01') TO ('2100-01-02')`,
    );
    const { listener, heard } = await listenForSettledKeys();
    try {
      const { rows } = await stack.db.query<{ id: string }>(
        `INSERT INTO idempotency_keys (tenant_id, operation, key, request_hash, state,
                                       recovery_point, lease_expires_at, waiting, expires_at)
         SELECT gen_random_uuid(), 'payments.create.v1', 'moved-on-finish', '\\x00', 'started',
                'provider_charge_sent', now() + interval '1 minute', true,
                (SELECT max(upper_bound) FROM idempotency_partitions
                  WHERE parent = 'idempotency_keys') - interval '1 second'
         RETURNING id::text`,
      );
      const id = rows[0]!.id;
      await stack.db.query(
        `UPDATE idempotency_keys
            SET state = 'finished', recovery_point = 'finished', outcome = 'SUCCEEDED',
                lease_expires_at = NULL, waiting = false, expires_at = '2100-01-01 12:00+00'
          WHERE id = $1`,
        [id],
      );
      const moved = await stack.db.query(`SELECT 1 FROM ${far} WHERE id = $1`, [id]);
      expect(moved.rows).toHaveLength(1);
      await waitUntil(() => heard.length > 0, { timeoutMs: 2_000, what: 'the notification' });
      expect(heard).toEqual([id]);
    } finally {
      await listener.end();
      await stack.db.query(`DROP TABLE ${far}`);
    }
  });

  it('notifies only for a row a duplicate marked, once, and clears the mark', async () => {
    const { listener, heard } = await listenForSettledKeys();
    try {
      const unmarked = slowPayment();
      await create(stack.app.url, unmarked);
      const marked = slowPayment();
      const first = create(stack.app.url, marked);
      await inFlight(marked);
      const waiting = create(stack.app.url, marked, { prefer: 'wait=10' });
      await waitedFor(marked);
      await Promise.all([first, waiting]);
      const row = await keyRowOf(stack.db, marked['idempotencyKey'] as string);
      await waitUntil(() => heard.length > 0, { timeoutMs: 2_000, what: 'the notification' });
      expect(heard).toEqual([String(row?.['id'])]);
      expect(row?.['waiting']).toBe(false);
    } finally {
      await listener.end();
    }
  });
});

/** A connection of its own listening to the wake-up channel, and the ids it has heard so far. */
async function listenForSettledKeys(): Promise<{ listener: pg.Client; heard: string[] }> {
  const listener = new pg.Client({ connectionString: database.url });
  await listener.connect();
  const heard: string[] = [];
  listener.on('notification', (message) => heard.push(message.payload ?? ''));
  await listener.query('LISTEN idempotency_key_settled');
  return { listener, heard };
}
