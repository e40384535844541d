/**
 * The merchant side: a population of clients on the SDK (@payments-gateway/client), as a
 * merchant's backend would run it. Each logical operation has one key for its whole life
 * (journaled in the plan); the SDK sends it until a final answer arrives, backing off with
 * jitter from the operation's own seeded stream, honouring Retry-After (IDEMPOTENCY_KEY_IN_USE,
 * OUTCOME_PENDING, PROVIDER_UNAVAILABLE), and its fetch moves to the other gateway when one is
 * down. Some operations are double-submitted at once, some are sent again after their final
 * answer: every final answer, and every answer the contract does not allow, is journaled.
 */
import {
  createPaymentsClient,
  PaymentsApiError,
  type AttemptReport,
  type CancelPaymentInput,
  type CapturePaymentInput,
  type CreatePaymentInput,
  type PaymentsClient,
  type RefundPaymentInput,
} from '../../packages/client/src/index.ts';
import { finalOfResult, readRefusal } from './answers.ts';
import { createGatewayFetch } from './gateway-fetch.ts';
import type { Journal, OperationRecord } from './journal.ts';
import { formatMinor, type CreateOp, type PlannedOp } from './plan.ts';
import { Prng } from './prng.ts';
import { Semaphore } from './semaphore.ts';
import { TENANTS, type GatewaySlot } from './stack.ts';
import type { Tier } from './tiers.ts';

/**
 * An attempt gets this long before the client gives up on it and retries. Longer than the
 * gateway's own bound (a provider timeout plus a probe, 1.4 s) plus a busy machine's queueing,
 * shorter than the longest SIGSTOP (6 s), so some requests are abandoned on a paused gateway
 * and their retries meet the paused owner's lease on the other one.
 */
const REQUEST_TIMEOUT_MS = 5_000;
/** Backoff between sends: full jitter under a ceiling of 100 ms doubling to 2 s. */
const BACKOFF = { baseMs: 100, capMs: 2_000 };
/**
 * Prefer: wait on mutations: well inside an attempt, so the answer after the wait still arrives
 * within it. (A gateway that does not implement it ignores it.)
 */
const PREFER_WAIT_SECONDS = 2;
/**
 * An operation must be final within this. The slowest legitimate path: three unanswered
 * attempts, reconciliation past the apply window, then the client's 30 s Retry-After.
 */
const OPERATION_DEADLINE_MS = 240_000;
/** Attempts are bounded by the operation's deadline, not by a count. */
const MAX_ATTEMPTS = 10_000;
/** The url the SDK is given; the gateway fetch replaces its origin with a live gateway's. */
const ANY_GATEWAY = 'http://gateway.chaos.invalid/graphql';

/** Holds the launch of operation `index` while a fault due before it has not fired yet. */
export interface LaunchGate {
  admit(index: number): Promise<void>;
}

export interface ClientPopulation {
  /** Launches every planned operation in order; resolves when all are done or the deadline passed. */
  run(): Promise<void>;
}

/** What one operation sends, by kind; its key is the SDK's to add (the operation's own). */
type Call =
  | { kind: 'create'; input: Omit<CreatePaymentInput, 'idempotencyKey'> }
  | { kind: 'capture'; input: Omit<CapturePaymentInput, 'idempotencyKey'> }
  | { kind: 'refund'; input: Omit<RefundPaymentInput, 'idempotencyKey'> }
  | { kind: 'cancel'; input: Omit<CancelPaymentInput, 'idempotencyKey'> };

export function createClients(input: {
  seed: number;
  tier: Tier;
  journal: Journal;
  slots: GatewaySlot[];
  gate: LaunchGate;
}): ClientPopulation {
  const { seed, tier, journal, slots, gate } = input;
  const http = new Semaphore(tier.httpConcurrency);
  const active = new Semaphore(tier.activeOperations);
  const { stats } = journal;

  /** An SDK client of `op`'s tenant whose jitter and gateway choices come from `rng`. */
  function clientFor(run: {
    op: PlannedOp;
    rng: Prng;
    onAttempt: (report: AttemptReport) => void;
  }): PaymentsClient {
    return createPaymentsClient({
      url: ANY_GATEWAY,
      apiKey: TENANTS[run.op.tenant].apiKey,
      fetch: createGatewayFetch({ slots, rng: run.rng, budget: http, stats }),
      random: () => run.rng.next(),
      maxAttempts: MAX_ATTEMPTS,
      attemptTimeoutMs: REQUEST_TIMEOUT_MS,
      backoff: BACKOFF,
      preferWaitSeconds: PREFER_WAIT_SECONDS,
      onAttempt: run.onAttempt,
    });
  }

  /** What every attempt tells the run's figures, and a pending create's payment to the journal. */
  function observe(op: PlannedOp, report: AttemptReport): void {
    if (report.attempt > 1) stats.retries += 1;
    if (report.outcome === 'retrying') count(report.code);
    if (op.kind === 'create' && report.paymentId !== undefined) {
      journal.notePayment(op.index, report.paymentId);
    }
  }

  function count(code: string | null): void {
    if (code === 'OUTCOME_PENDING') stats.outcomePending += 1;
    else if (code === 'IDEMPOTENCY_KEY_IN_USE') stats.inUse += 1;
    else if (code === 'PROVIDER_UNAVAILABLE') stats.providerUnavailable += 1;
    else if (code === 'INTERNAL_SERVER_ERROR') stats.internalErrors += 1;
    else if (code === 'DATABASE_UNAVAILABLE') stats.databaseUnavailable += 1;
    else if (code === 'SERVICE_UNAVAILABLE') stats.serviceUnavailable += 1;
    else if (code === 'TIMEOUT') stats.timeouts += 1;
    else stats.networkErrors += 1;
  }

  /**
   * One logical send of the operation through the SDK, until a final answer (journaled), an
   * answer the contract does not allow, or the deadline. Returns true if it got a final answer.
   */
  async function untilFinal(run: {
    record: OperationRecord;
    rng: Prng;
    call: Call;
    phase: 'first' | 'replay';
    deadline: number;
  }): Promise<boolean> {
    const { record, phase } = run;
    const { op } = record;
    const timeoutMs = run.deadline - Date.now();
    if (timeoutMs <= 0) return false;
    let last: AttemptReport | undefined;
    const client = clientFor({
      op,
      rng: run.rng,
      onAttempt: (report) => {
        last = report;
        observe(op, report);
      },
    });
    try {
      const payload = await send({ client, key: op.key, call: run.call, timeoutMs });
      const final = finalOfResult({ payload, last, phase });
      if (final.replayed) stats.replays += 1;
      record.finals.push(final);
      const payment = payload['payment'] as { id?: unknown } | undefined;
      if (op.kind === 'create' && typeof payment?.id === 'string') {
        journal.notePayment(op.index, payment.id);
      }
      return true;
    } catch (error) {
      if (!(error instanceof PaymentsApiError)) throw error;
      const refusal = readRefusal({ error, last, phase });
      switch (refusal.kind) {
        case 'final':
          if (refusal.final.replayed) stats.replays += 1;
          record.finals.push(refusal.final);
          return true;
        case 'unexpected':
          record.unexpected.push(refusal);
          return false;
        case 'open':
          return false;
      }
    }
  }

  async function runOperation(op: PlannedOp): Promise<void> {
    const record = journal.record(op.index);
    const call = await callOf(op);
    if (call === null) {
      journal.giveUp(op.index, { skipped: true });
      return;
    }
    // The clock starts once the payment it acts on exists, not while waiting for it.
    record.startedAt = Date.now();
    const deadline = record.startedAt + OPERATION_DEADLINE_MS;
    // Copies of the first request race each other; each journals its own final answer.
    const copies = Array.from({ length: op.copies }, (_, copy) =>
      untilFinal({
        record,
        rng: Prng.derive(seed, `client/${op.index}/${copy}`),
        call,
        phase: 'first',
        deadline,
      }).then((final) => {
        if (final) journal.settle(op.index, Date.now());
        return final;
      }),
    );
    const results = await Promise.all(copies);
    if (!results.some(Boolean)) {
      const why =
        record.unexpected.length > 0 ? 'an answer the contract does not allow' : 'deadline';
      journal.giveUp(op.index, { abandoned: why });
      return;
    }
    const rng = Prng.derive(seed, `replay/${op.index}`);
    for (let i = 0; i < op.replays; i++) {
      await sleep(rng.int(0, 500));
      await untilFinal({ record, rng, call, phase: 'replay', deadline });
    }
    if (op.kind !== 'create' && op.foreign && call.kind !== 'create') {
      await lookUpForeign({ record, rng, paymentId: call.input.paymentId, deadline });
    }
  }

  /** The other tenant asks for the payment by id: it must not exist for them. */
  async function lookUpForeign(run: {
    record: OperationRecord;
    rng: Prng;
    paymentId: string;
    deadline: number;
  }): Promise<void> {
    const { record } = run;
    const timeoutMs = run.deadline - Date.now();
    if (timeoutMs <= 0) {
      record.foreignLookup = 'no answer before the deadline';
      return;
    }
    const client = clientFor({ op: record.op, rng: run.rng, onAttempt: () => undefined });
    try {
      record.foreignLookup = await client.payment(run.paymentId, { timeoutMs });
    } catch (error) {
      if (!(error instanceof PaymentsApiError)) throw error;
      record.foreignLookup = `no answer: ${error.code}${error.retryable ? ' (deadline)' : ''}`;
    }
  }

  /** What the operation sends; a follow-up first waits for its payment to exist. */
  async function callOf(op: PlannedOp): Promise<Call | null> {
    if (op.kind === 'create') return { kind: 'create', input: createInput(op) };
    const paymentId = op.early
      ? await journal.whenPaymentKnown(op.target)
      : paymentIdOf(await journal.whenResolved(op.target));
    if (paymentId === null) return null;
    const targetOp = journal.record(op.target).op as CreateOp;
    const amount =
      op.amountMinor === null ? undefined : formatMinor(op.amountMinor, targetOp.currency);
    switch (op.kind) {
      case 'capture':
        return { kind: 'capture', input: { paymentId, ...(amount ? { amount } : {}) } };
      case 'refund':
        // Refunds always name an amount (followUpAmount).
        return { kind: 'refund', input: { paymentId, amount: amount ?? '0', reason: 'chaos' } };
      case 'cancel':
        return { kind: 'cancel', input: { paymentId } };
    }
  }

  return {
    async run() {
      const loadDeadline = Date.now() + tier.loadDeadlineMs;
      const running: Array<Promise<void>> = [];
      for (const op of journal.records.map((r) => r.op)) {
        if (Date.now() > loadDeadline) break;
        await gate.admit(op.index);
        const release = await active.acquire();
        stats.launched += 1;
        running.push(
          runOperation(op)
            .catch((error: unknown) => {
              journal.giveUp(op.index, { abandoned: `client error: ${String(error)}` });
            })
            .finally(release),
        );
      }
      await Promise.all(running);
      for (const record of journal.records) {
        if (!record.settled && record.abandoned === null && !record.skipped) {
          journal.giveUp(record.op.index, { abandoned: 'never launched (load deadline)' });
        }
      }
    },
  };
}

/** The operation through its SDK method, under its journaled key; the method's payload. */
async function send(input: {
  client: PaymentsClient;
  key: string;
  call: Call;
  timeoutMs: number;
}): Promise<Record<string, unknown>> {
  const { client, call } = input;
  const options = { idempotencyKey: input.key, timeoutMs: input.timeoutMs };
  switch (call.kind) {
    case 'create':
      return await client.createPayment(call.input, options);
    case 'capture':
      return await client.capturePayment(call.input, options);
    case 'refund':
      return await client.refundPayment(call.input, options);
    case 'cancel':
      return await client.cancelPayment(call.input, options);
  }
}

function createInput(op: CreateOp): Omit<CreatePaymentInput, 'idempotencyKey'> {
  return {
    amount: formatMinor(op.amountMinor, op.currency),
    currency: op.currency,
    paymentMethod: op.token,
    captureMethod: op.captureMethod,
    reference: op.reference,
  };
}

/** The payment a settled createPayment made, from its first final answer. */
export function paymentIdOf(record: OperationRecord): string | null {
  const payment = record.finals[0]?.data?.['payment'] as { id?: unknown } | undefined;
  return typeof payment?.id === 'string' ? payment.id : null;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
