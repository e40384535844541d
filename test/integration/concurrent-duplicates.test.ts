import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { errorCodeOf, graphql, paymentOf } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import {
  countRows,
  createPaymentOn,
  paymentInput,
  TENANT_A,
  useTestStack,
} from '../support/test-stack.ts';

const stack = useTestStack('concurrency', { app: { poolMax: 20 } });

/** Enough identical requests to overrun the connection pool (20) several times over. */
const DUPLICATES = 100;
/** How long the phase body lingers, so that many duplicates arrive while it runs. */
const BODY_DWELL_MS = 200;
/** Hit once by each admission transaction, just before it is sent. */
const ADMISSION_SENT = 'createPayment.provider_charge_sent.before-commit';
/** Hit by the winner just before it charges, after its admission has committed. */
const CHARGE = 'createPayment.provider_charge.before-call';
/** The longest a hold waits for the duplicates it waits for; a bound, not a timing. */
const HOLD_BOUND_MS = 10_000;

/** Resolves once `done` is true, or once HOLD_BOUND_MS have passed (the test then fails). */
async function until(done: () => boolean): Promise<void> {
  const bound = Date.now() + HOLD_BOUND_MS;
  while (!done() && Date.now() < bound) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * Counts, until `stop`, the requests that find this process's admission of their key on its way
 * and wait for it (AdmissionsInFlight), by wrapping the engine's own instance.
 */
function countFollowers(): { waiting: () => number; stop: () => void } {
  const admissions = stack.app.services.deps.engine.deps.admissions;
  const pending = admissions.pending.bind(admissions);
  let waiting = 0;
  admissions.pending = (scope) => {
    const settling = pending(scope);
    if (settling !== undefined) waiting += 1;
    return settling;
  };
  return {
    waiting: () => waiting,
    stop: () => void Reflect.deleteProperty(admissions, 'pending'),
  };
}

/**
 * A storm of `followers` + 1 identical requests (`send`) whose answers do not depend on how
 * slowly a loaded machine delivers them. The first admission waits before it is sent until
 * `followers` duplicates wait on it, and the winner's charge waits until every other request
 * has its answer: a duplicate that arrived, or read the key, after the payment finished would
 * be answered as a replay instead. Every later admission dwells BODY_DWELL_MS. `before` and
 * `after` see each admission's number around its hold, and `after` may throw.
 */
function holdAdmissions(options: {
  followers: number;
  before?: (nth: number) => void;
  after?: (nth: number) => void;
}): {
  send: (input: ReturnType<typeof paymentInput>) => ReturnType<typeof sendAll>;
  sent: () => number;
  release: () => void;
} {
  let sent = 0;
  let answered = 0;
  const followers = countFollowers();
  stack.app.faults.arm(ADMISSION_SENT, {
    kind: 'call',
    run: async () => {
      const nth = (sent += 1);
      options.before?.(nth);
      if (nth === 1) await until(() => followers.waiting() >= options.followers);
      else await new Promise((resolve) => setTimeout(resolve, BODY_DWELL_MS));
      options.after?.(nth);
    },
  });
  stack.app.faults.arm(CHARGE, {
    kind: 'call',
    run: () => until(() => answered >= options.followers),
  });
  return {
    send: (input) =>
      sendAll(options.followers + 1, input, () => {
        answered += 1;
      }),
    sent: () => sent,
    release: () => {
      stack.app.faults.disarm(ADMISSION_SENT);
      stack.app.faults.disarm(CHARGE);
      followers.stop();
    },
  };
}

/** `count` identical createPayment requests at once; `onAnswer` sees each answer arrive. */
function sendAll(count: number, input: ReturnType<typeof paymentInput>, onAnswer: () => void) {
  return Promise.all(
    Array.from({ length: count }, () =>
      createPaymentOn(stack, input).then((answer) => {
        onAnswer();
        return answer;
      }),
    ),
  );
}

/**
 * Counts the round trips of the gateway's request pool from now on, where PostgreSQL ends each
 * one (a ReadyForQuery), as test/integration/round-trips.test.ts does.
 */
function countRoundTrips(): () => number {
  let trips = 0;
  const counted = new WeakSet<pg.PoolClient>();
  const count = () => void (trips += 1);
  const pool = stack.app.services.deps.pool;
  const watch = (client: pg.PoolClient) => {
    if (counted.has(client)) return;
    counted.add(client);
    (client as unknown as { connection: pg.Connection }).connection.on('readyForQuery', count);
  };
  pool.on('acquire', watch);
  return () => trips;
}

describe('100 concurrent identical createPayment requests', () => {
  it('make one provider charge and one payment; every answer is that payment or IDEMPOTENCY_KEY_IN_USE; the phase body never runs twice at once', async () => {
    let inBody = 0;
    let maxInBody = 0;
    let bodyRuns = 0;
    stack.app.faults.arm(CHARGE, {
      kind: 'call',
      run: async () => {
        inBody += 1;
        bodyRuns += 1;
        maxInBody = Math.max(maxInBody, inBody);
        await new Promise((resolve) => setTimeout(resolve, BODY_DWELL_MS));
      },
    });
    stack.app.faults.arm('createPayment.provider_charge.after-call', {
      kind: 'call',
      run: () => void (inBody -= 1),
    });

    const input = paymentInput('storm-1', { amount: '42.00', reference: 'storm-ref-1' });
    const answers = await Promise.all(
      Array.from({ length: DUPLICATES }, () => createPaymentOn(stack, input)),
    );

    const succeeded = answers.filter((a) => a.status === 200);
    const inUse = answers.filter((a) => errorCodeOf(a) === 'IDEMPOTENCY_KEY_IN_USE');
    expect(succeeded.length + inUse.length).toBe(DUPLICATES);
    expect(succeeded.length).toBeGreaterThanOrEqual(1);
    expect(inUse.length).toBeGreaterThan(0); // the body dwells, so duplicates must meet it in flight
    expect(new Set(succeeded.map((a) => paymentOf(a).id)).size).toBe(1);
    const winner = paymentOf(succeeded[0]!).id;
    for (const answer of inUse) {
      expect(answer.body.errors?.[0]?.extensions?.['paymentId']).toBe(winner);
      expect(answer.status).toBe(409);
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(answer.body.errors?.[0]?.extensions?.['retryAfterSeconds']).toBeGreaterThanOrEqual(1);
    }
    expect(stack.sandbox.charges({ reference: 'storm-ref-1' })).toHaveLength(1);
    expect(await countRows(stack.db, 'payments')).toBe(1);
    expect(bodyRuns).toBe(1);
    expect(maxInBody).toBe(1);

    // Once finished, every retry is the stored payment.
    const late = await createPaymentOn(stack, input);
    expect(paymentOf(late).id).toBe(paymentOf(succeeded[0]!).id);
    stack.app.faults.disarm(CHARGE);
    stack.app.faults.disarm('createPayment.provider_charge.after-call');
  });

  it('duplicates that arrive while the first admission is on its way send no admission of their own', async () => {
    // The first admission dwells before it is sent; every duplicate reads no row meanwhile.
    // Each admission sent hits this point once: without AdmissionsInFlight, all 20 would, and
    // 19 would queue on the scope lock and roll back.
    const admissions = holdAdmissions({ followers: 19 });
    try {
      const input = paymentInput('storm-one-admission', { reference: 'storm-one-admission' });
      const answers = await admissions.send(input);
      expect(admissions.sent()).toBe(1);
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      expect(answers.filter((a) => errorCodeOf(a) === 'IDEMPOTENCY_KEY_IN_USE')).toHaveLength(19);
      expect(stack.sandbox.charges({ reference: 'storm-one-admission' })).toHaveLength(1);
    } finally {
      admissions.release();
    }
  });

  it('duplicates that arrive while the first admission is on its way wait for it before they read', async () => {
    // Reading meanwhile finds no row, and a duplicate that then finds the admission gone (it
    // committed between the read and the check) sends an admission of its own, which loses:
    // a rolled-back transaction per unlucky duplicate. So none reads until the admission is done.
    const trips = countRoundTrips();
    let duringHold = -1;
    let atHold = 0;
    const admissions = holdAdmissions({
      followers: 19,
      before: () => void (atHold = trips()),
      after: () => void (duringHold = trips() - atHold),
    });
    try {
      const input = paymentInput('storm-wait-first', { reference: 'storm-wait-first' });
      const answers = await admissions.send(input);
      expect(answers.filter((a) => errorCodeOf(a) === 'IDEMPOTENCY_KEY_IN_USE')).toHaveLength(19);
      expect(duringHold).toBe(0);
    } finally {
      admissions.release();
    }
  });

  it('answer their 409 located at the field, without formatting a stack trace', async () => {
    // graphql-js wraps an error that has no path in a new one, which copies (and so formats)
    // the first one's stack: the largest single cost of a 409 once admission was cheap.
    let graphqlStacks = 0;
    const saved = Object.getOwnPropertyDescriptor(Error, 'prepareStackTrace');
    const original = saved?.value as
      ((error: Error, frames: NodeJS.CallSite[]) => unknown) | undefined;
    Error.prepareStackTrace = (error: Error, frames: NodeJS.CallSite[]): unknown => {
      if (error.name === 'GraphQLError') graphqlStacks += 1;
      if (original !== undefined) return original(error, frames);
      return [
        `${error.name}: ${error.message}`,
        ...frames.map((f) => `${f.getFileName() ?? '?'}:${f.getLineNumber() ?? '?'}`),
      ].join('\n    at ');
    };
    const admissions = holdAdmissions({ followers: 9 });
    try {
      const input = paymentInput('storm-located', { reference: 'storm-located' });
      const answers = await admissions.send(input);
      const inUse = answers.filter((a) => errorCodeOf(a) === 'IDEMPOTENCY_KEY_IN_USE');
      expect(inUse).toHaveLength(9);
      for (const answer of inUse) {
        const [error] = answer.body.errors ?? [];
        expect(error?.path).toEqual(['createPayment']);
        expect(error?.locations?.[0]?.line).toBeGreaterThan(0);
      }
      expect(graphqlStacks).toBe(0);
    } finally {
      if (saved === undefined) Reflect.deleteProperty(Error, 'prepareStackTrace');
      else Object.defineProperty(Error, 'prepareStackTrace', saved);
      admissions.release();
    }
  });

  it('when that first admission fails, its duplicates admit the key themselves, once', async () => {
    const admissions = holdAdmissions({
      followers: 19,
      after: (nth) => {
        if (nth === 1) throw new Error('the first admission fails');
      },
    });
    try {
      const input = paymentInput('storm-leader-fails', { reference: 'storm-leader-fails' });
      const answers = await admissions.send(input);
      expect(answers.filter((a) => a.status === 500)).toHaveLength(1);
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      expect(answers.filter((a) => errorCodeOf(a) === 'IDEMPOTENCY_KEY_IN_USE')).toHaveLength(18);
      expect(admissions.sent()).toBe(2);
      expect(stack.sandbox.charges({ reference: 'storm-leader-fails' })).toHaveLength(1);
    } finally {
      admissions.release();
    }
  });

  it('without any delay, 20 duplicates of each of 5 keys still make one charge per key', async () => {
    const keys = Array.from({ length: 5 }, (_, i) => `burst-${i}`);
    const answers = await Promise.all(
      keys.flatMap((key) =>
        Array.from({ length: 20 }, () =>
          graphql(stack.app.url, {
            apiKey: TENANT_A.apiKey,
            query: CREATE_PAYMENT,
            variables: {
              input: {
                idempotencyKey: key,
                amount: '1.00',
                currency: 'EUR',
                paymentMethod: 'pm_card_visa',
                reference: `ref-${key}`,
              },
            },
          }).then((answer) => ({ key, answer })),
        ),
      ),
    );
    for (const key of keys) {
      const mine = answers.filter((a) => a.key === key).map((a) => a.answer);
      expect(
        mine.every((a) => a.status === 200 || errorCodeOf(a) === 'IDEMPOTENCY_KEY_IN_USE'),
      ).toBe(true);
      expect(new Set(mine.filter((a) => a.status === 200).map((a) => paymentOf(a).id)).size).toBe(
        1,
      );
      expect(stack.sandbox.charges({ reference: `ref-${key}` })).toHaveLength(1);
    }
  });
});
