import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREATE_PAYMENT_FAULT_POINTS } from '../../services/payments/create-payment.flow.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { errorCodeOf, graphql, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { CREATE_PAYMENT, createUntilFinal } from '../support/operations.ts';
import { startCommitCutter, type CommitCutter } from '../support/pg-commit-cutter.ts';
import { startTestStack, TENANT_A, type TestStack } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';
import { committedPhases } from '../support/committed-phases.ts';

/**
 * PostgreSQL dropping out under a request: a backend terminated at every phase boundary, and a
 * connection cut after COMMIT reached the server but before its answer came back. Each request
 * ends with exactly one effect and no stuck record, and the process keeps serving.
 */
const database = useTestDatabase('db-faults');
let stack: TestStack;
let cutter: CommitCutter;

beforeAll(async () => {
  cutter = await startCommitCutter(database.url);
  stack = await startTestStack({ databaseUrl: cutter.url, app: { leaseMs: 5_000 } });
});
afterAll(async () => {
  await stack?.stop();
  await cutter?.close();
});

/** Terminates every backend of the services' pool, waiting until each is gone. */
async function killServiceBackends(): Promise<number> {
  const { rows } = await stack.db.query<{ killed: boolean }>(
    `SELECT pg_terminate_backend(pid, 2000) AS killed FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'payments-services'`,
  );
  return rows.filter((r) => r.killed).length;
}

/** A payment of 2.50 under `key` (its reference too). */
function paymentInput(key: string) {
  return {
    idempotencyKey: key,
    amount: '2.50',
    currency: 'EUR',
    paymentMethod: 'pm_card_visa',
    reference: key,
  };
}

/** Sends `input` once with the services' backends killed at `point`; how many were killed. */
async function createWithKillsAt(
  point: string,
  input: ReturnType<typeof paymentInput>,
): Promise<{ answer: GraphQLAnswer; kills: number }> {
  let kills = 0;
  stack.app.faults.arm(point, {
    kind: 'call',
    run: async () => void (kills += await killServiceBackends()),
  });
  try {
    const answer = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: { input },
    });
    return { answer, kills };
  } finally {
    stack.app.faults.disarm(point);
  }
}

async function assertExactlyOnce(key: string): Promise<void> {
  expect(stack.sandbox.charges({ reference: key })).toHaveLength(1);
  const phases = await committedPhases(stack.db, key);
  expect(phases.map((p) => p.recovery_point)).toEqual(['provider_charge_sent', 'finished']);
  const { rows: payments } = await stack.db.query(
    'SELECT status FROM payments WHERE reference = $1',
    [key],
  );
  expect(payments).toEqual([{ status: 'SUCCEEDED' }]);
}

describe.each(CREATE_PAYMENT_FAULT_POINTS)('a PostgreSQL backend killed at %s', (point) => {
  it('ends with one effect, no stuck record, and the pool keeps serving', async () => {
    const key = `pgkill.${point}`;
    const input = paymentInput(key);
    const { answer: first, kills } = await createWithKillsAt(point, input);
    expect(kills).toBeGreaterThan(0);
    // Whatever the lost connection cost this attempt, it is named for what it is: a database
    // that is away for a moment (503, Retry-After), never a masked 500.
    if (first.status !== 200) {
      expect({ status: first.status, code: errorCodeOf(first) }).toEqual({
        status: 503,
        code: 'DATABASE_UNAVAILABLE',
      });
      expect(first.headers.get('retry-after')).toBe('1');
    }
    const final = await createUntilFinal(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      input,
      deadlineMs: 15_000,
    });
    expect(paymentOf(final).status).toBe('SUCCEEDED');
    await assertExactlyOnce(key);
    const { rows: stuck } = await stack.db.query(
      `SELECT key FROM idempotency_keys WHERE state <> 'finished'`,
    );
    expect(stuck).toEqual([]);
    const next = { ...input, idempotencyKey: `${key}.after`, reference: `${key}.after` };
    const served = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: { input: next },
    });
    expect(paymentOf(served).status).toBe('SUCCEEDED');
  });
});

describe('a backend killed while the admission is under way', () => {
  it('answers DATABASE_UNAVAILABLE (503, Retry-After), stores nothing, and the retry runs', async () => {
    const key = 'pgkill.answer';
    const input = paymentInput(key);
    const { answer: first } = await createWithKillsAt(
      'createPayment.provider_charge_sent.before-commit',
      input,
    );
    expect(first.status).toBe(503);
    expect(errorCodeOf(first)).toBe('DATABASE_UNAVAILABLE');
    expect(first.headers.get('retry-after')).toBe('1');
    const { rows } = await stack.db.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [key]);
    expect(rows).toEqual([]);
    const retried = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: { input },
    });
    expect(paymentOf(retried).status).toBe('SUCCEEDED');
    await assertExactlyOnce(key);
  });
});

/** The commits a payment makes that a test cuts: the admission's, or the final phase's. */
const CUT_COMMITS = [
  ['the admission', 0],
  ['the final phase', 1],
] as const;

/**
 * Sends `input` once with `arm` run just before the commit that `commitsBefore` commits pass
 * first: at once for the admission, after the provider's answer for the final phase.
 */
async function createWithCommitArmed(
  commitsBefore: number,
  input: ReturnType<typeof paymentInput>,
  arm: () => void,
): Promise<GraphQLAnswer> {
  if (commitsBefore === 0) arm();
  else stack.app.faults.arm('createPayment.provider_charge.after-call', { kind: 'call', run: arm });
  try {
    return await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: { input },
    });
  } finally {
    stack.app.faults.disarm('createPayment.provider_charge.after-call');
  }
}

describe('a connection cut after COMMIT reached the server, before its answer came back', () => {
  it.each(CUT_COMMITS)(
    'of %s: the commit is settled by reading it back, and the request completes once',
    async (_name, commitsBefore) => {
      const key = `cut.${commitsBefore}`;
      const cutsBefore = cutter.cuts();
      const answer = await createWithCommitArmed(commitsBefore, paymentInput(key), () =>
        cutter.cutAfterNextCommit(),
      );
      expect(cutter.cuts()).toBe(cutsBefore + 1);
      // Not a 500 and not a retry: the gateway itself found that the commit had happened.
      expect(paymentOf(answer).status).toBe('SUCCEEDED');
      await assertExactlyOnce(key);
    },
  );
});

/**
 * The fences a lost commit meets before it is read back, and the bytes that pick each out: the
 * lost session's (lib/db/lost-session.ts), then the read-back's own, sent in one round trip with
 * the read (lib/db/durable-read-back.ts).
 */
const REFUSED_FENCES = [
  ["the lost session's fence", "'payments-gateway.fence', ''"],
  ["the read-back's own fence", "'read-back'"],
] as const;

describe('a commit cut off whose durability the fence could not prove', () => {
  // After a lost session the pool ends it and fences (lib/db/lost-session.ts). When the fence
  // fails too, a commit that did happen may be on this primary alone (a switchover's first
  // moments): reading it back could answer from what a failover undoes. The read-back fences on
  // its own connection as well, since the session's fence may have reached another server. When
  // either fails the request must fail retryably instead, and a later retry find what was stored.
  it.each(
    CUT_COMMITS.flatMap(([commit, commitsBefore]) =>
      REFUSED_FENCES.map(([fence, bytes]) => ({ commit, fence, commitsBefore, bytes })),
    ),
  )(
    'of $commit, $fence refused: not read back; DATABASE_UNAVAILABLE, and a retry completes once',
    async ({ commitsBefore, bytes }) => {
      const key = `unconfirmed.${commitsBefore}.${bytes.length}`;
      const input = paymentInput(key);
      const cutsBefore = cutter.cuts();
      const refusalsBefore = cutter.refusals();
      const first = await createWithCommitArmed(commitsBefore, input, () => {
        cutter.cutAfterNextCommit();
        cutter.refuseNext(bytes);
      });
      expect(cutter.cuts()).toBe(cutsBefore + 1);
      expect(cutter.refusals()).toBe(refusalsBefore + 1);
      // The commit happened (the cutter saw the server confirm it), yet the answer is not
      // built from it.
      expect({ status: first.status, code: errorCodeOf(first) }).toEqual({
        status: 503,
        code: 'DATABASE_UNAVAILABLE',
      });
      expect(first.headers.get('retry-after')).toBe('1');
      const { rows } = await stack.db.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [key]);
      expect(rows).toHaveLength(1);
      const final = await createUntilFinal(stack.app.url, {
        apiKey: TENANT_A.apiKey,
        input,
        deadlineMs: 15_000,
      });
      expect(paymentOf(final).status).toBe('SUCCEEDED');
      await assertExactlyOnce(key);
    },
  );
});

describe('an admission PostgreSQL refused', () => {
  // A statement answered with an error aborted its transaction: nothing committed, so there is
  // nothing to read back, and no fence to wait for (lib/db/durable-read-back.ts, commitInDoubt).
  it('is not read back: DUPLICATE_REFERENCE at once, with no read-back sent', async () => {
    const guard = (enabled: boolean) =>
      stack.app.services.client.ops.setReferenceGuard.mutate({
        tenant: TENANT_A.name,
        enabled,
        actor: 'test',
      });
    await guard(true);
    try {
      const held = await createUntilFinal(stack.app.url, {
        apiKey: TENANT_A.apiKey,
        input: { ...paymentInput('refused.1'), reference: 'refused-reference' },
        deadlineMs: 15_000,
      });
      const refusalsBefore = cutter.refusals();
      cutter.refuseNext("'read-back'");
      const second = await graphql(stack.app.url, {
        apiKey: TENANT_A.apiKey,
        query: CREATE_PAYMENT,
        variables: { input: { ...paymentInput('refused.2'), reference: 'refused-reference' } },
      });
      expect({ status: second.status, code: errorCodeOf(second) }).toEqual({
        status: 409,
        code: 'DUPLICATE_REFERENCE',
      });
      expect(second.body.errors?.[0]?.extensions?.['paymentId']).toBe(paymentOf(held).id);
      expect(cutter.refusals()).toBe(refusalsBefore);
    } finally {
      cutter.refuseNothing();
      await guard(false);
    }
  });
});

describe('an admission whose commit failed while a duplicate waited on its key', () => {
  // The duplicate arrives at another gateway process: one process's own duplicates wait for
  // its admission in memory (AdmissionsInFlight) and never reach the scope lock.
  let other: TestStack;
  beforeAll(async () => {
    other = await startTestStack({
      databaseUrl: cutter.url,
      app: { leaseMs: 5_000, pspUrl: stack.sandbox.url },
    });
  });
  afterAll(async () => {
    await other?.stop();
  });
  /** The pid of the services' backend waiting on a lock of `kind`, once there is one. */
  async function waitingBackend(kind: 'relation' | 'advisory'): Promise<number> {
    return waitUntil(
      async () => {
        const { rows } = await stack.db.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'payments-services'
              AND wait_event_type = 'Lock' AND wait_event = $1`,
          [kind],
        );
        return rows[0]?.pid;
      },
      { timeoutMs: 10_000, intervalMs: 10, what: `a services backend waiting on a ${kind} lock` },
    );
  }

  it('does not mistake the duplicate’s row for its own: one owner, one payment, one charge', async () => {
    const key = 'doubt-dup';
    const input = {
      idempotencyKey: key,
      amount: '4.40',
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
      reference: key,
    };
    const send = (to: TestStack = stack) =>
      graphql(to.app.url, {
        apiKey: TENANT_A.apiKey,
        query: CREATE_PAYMENT,
        variables: { input },
      });
    // The first request's admission (key row, payment row and COMMIT in one round trip) stops
    // at its payment row behind this lock, with its key row written and not committed. What
    // the server then tells it is held back until the duplicate has finished.
    const lockHolder = await stack.db.connect();
    await lockHolder.query('BEGIN');
    await lockHolder.query('LOCK TABLE payments IN SHARE MODE');
    let locked = true;
    const held = cutter.holdAnswersAfterNextCommit(key);
    try {
      const first = send();
      const firstBackend = await waitingBackend('relation');
      expect(held.engaged()).toBe(true); // its answers wait: it cannot read back early
      // The duplicate finds no committed key and waits for the first one's scope lock.
      const duplicate = send(other);
      await waitingBackend('advisory');
      // The first admission dies with its key row; the duplicate's goes through, commits, and
      // the duplicate is answered, all before the first request learns its commit failed. Its
      // read-back then finds a key row: the duplicate's, under another payment id.
      await stack.db.query('SELECT pg_terminate_backend($1, 2000)', [firstBackend]);
      await lockHolder.query('COMMIT');
      locked = false;
      const winner = await duplicate;
      expect(paymentOf(winner).status).toBe('SUCCEEDED');
      held.release();
      const loser = await first;
      expect(loser.status).not.toBe(200); // the loser did not claim the winner's row as its own
      const { rows: payments } = await stack.db.query(
        'SELECT id FROM payments WHERE reference = $1',
        [key],
      );
      expect(payments).toEqual([{ id: paymentOf(winner).id }]);
      expect(stack.sandbox.charges({ reference: key })).toHaveLength(1);
      const replay = await createUntilFinal(stack.app.url, {
        apiKey: TENANT_A.apiKey,
        input,
        deadlineMs: 10_000,
      });
      expect(paymentOf(replay).id).toBe(paymentOf(winner).id);
    } finally {
      held.release();
      if (locked) await lockHolder.query('ROLLBACK');
      lockHolder.release();
    }
  });
});
