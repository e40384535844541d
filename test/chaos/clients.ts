/**
 * The merchant side: a population of retrying clients. Each logical operation has one key for
 * its whole life; its client sends it until a final answer arrives, backing off with jitter,
 * honouring Retry-After (IDEMPOTENCY_KEY_IN_USE, OUTCOME_PENDING, PROVIDER_UNAVAILABLE), and
 * moving to the other gateway when one does not answer. Some operations are double-submitted
 * at once, some are sent again after their final answer: every answer is journaled.
 */
import { classify, DOCUMENT, FIELD, PAYMENT_QUERY, send } from './graphql.ts';
import type { Journal, OperationRecord } from './journal.ts';
import { formatMinor, type CreateOp, type PlannedOp } from './plan.ts';
import { Prng } from './prng.ts';
import { TENANTS, type GatewaySlot } from './stack.ts';
import type { Tier } from './tiers.ts';

/**
 * A request gets this long before the client gives up on it and retries. Longer than the
 * gateway's own bound (a provider timeout plus a probe, 1.4 s) plus a busy machine's queueing,
 * shorter than the longest SIGSTOP (6 s), so some requests are abandoned on a paused gateway
 * and their retries meet the paused owner's lease on the other one.
 */
const REQUEST_TIMEOUT_MS = 5_000;
/** Backoff between sends: 100 ms doubling to 2 s, with full jitter in its upper half. */
const BACKOFF_BASE_MS = 100;
const BACKOFF_CAP_MS = 2_000;
/** No gateway is up (both restarting, or one paused and one restarting): look again soon. */
const NO_GATEWAY_WAIT_MS = 200;
const NO_GATEWAY = 'NO_GATEWAY';
/**
 * An operation must be final within this. The slowest legitimate path: three unanswered
 * attempts, reconciliation past the apply window, then the client's 30 s Retry-After.
 */
const OPERATION_DEADLINE_MS = 240_000;

class Semaphore {
  private free: number;
  private readonly queue: Array<() => void> = [];

  constructor(size: number) {
    this.free = size;
  }

  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    return () => {
      const next = this.queue.shift();
      if (next !== undefined) next();
      else this.free += 1;
    };
  }
}

/** Holds the launch of operation `index` while a fault due before it has not fired yet. */
export interface LaunchGate {
  admit(index: number): Promise<void>;
}

export interface ClientPopulation {
  /** Launches every planned operation in order; resolves when all are done or the deadline passed. */
  run(): Promise<void>;
}

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

  /** One send through the HTTP budget to a live gateway, chosen by the operation's stream. */
  async function sendOnce(request: {
    rng: Prng;
    apiKey: string;
    query: string;
    variables: Record<string, unknown>;
  }): Promise<Awaited<ReturnType<typeof send>>> {
    const preferred = request.rng.int(0, slots.length - 1);
    const ordered = [...slots.slice(preferred), ...slots.slice(0, preferred)];
    const url = ordered.map((slot) => slot.url).find((u) => u !== undefined);
    if (url === undefined) {
      await sleep(NO_GATEWAY_WAIT_MS);
      return { failure: NO_GATEWAY };
    }
    const release = await http.acquire();
    try {
      stats.requests += 1;
      return await send({ url, ...request, timeoutMs: REQUEST_TIMEOUT_MS });
    } finally {
      release();
    }
  }

  /**
   * Sends one request until it gets a final answer (journaled), an answer the contract does
   * not allow, or the deadline. Returns true if it got a final answer.
   */
  async function untilFinal(run: {
    record: OperationRecord;
    rng: Prng;
    variables: Record<string, unknown>;
    phase: 'first' | 'replay';
    deadline: number;
  }): Promise<boolean> {
    const { record, rng, phase } = run;
    const { op } = record;
    const apiKey = TENANTS[op.tenant].apiKey;
    let sends = 0;
    for (let attempt = 0; ; attempt++) {
      const sent = await sendOnce({
        rng,
        apiKey,
        query: DOCUMENT[op.kind],
        variables: run.variables,
      });
      if (!('failure' in sent) || sent.failure !== NO_GATEWAY) {
        if (sends > 0) stats.retries += 1;
        sends += 1;
      }
      const answer = classify({ field: FIELD[op.kind], sent });
      switch (answer.kind) {
        case 'final': {
          if (answer.replayed) stats.replays += 1;
          record.finals.push({ ...answer, phase });
          const payment = answer.data?.['payment'] as { id?: unknown } | undefined;
          if (op.kind === 'create' && typeof payment?.id === 'string') {
            journal.notePayment(op.index, payment.id);
          }
          return true;
        }
        case 'unexpected':
          record.unexpected.push(answer);
          return false;
        case 'retry':
          count(answer.reason);
          if (op.kind === 'create' && answer.paymentId !== undefined) {
            journal.notePayment(op.index, answer.paymentId);
          }
          break;
      }
      if (Date.now() > run.deadline) return false;
      await sleep(Math.max(backoffMs({ rng, attempt }), answer.retryAfterMs ?? 0));
    }
  }

  function count(reason: string): void {
    if (reason === 'OUTCOME_PENDING') stats.outcomePending += 1;
    else if (reason === 'IDEMPOTENCY_KEY_IN_USE') stats.inUse += 1;
    else if (reason === 'PROVIDER_UNAVAILABLE') stats.providerUnavailable += 1;
    else if (reason === 'INTERNAL_SERVER_ERROR') stats.internalErrors += 1;
    else if (reason === 'TIMEOUT') stats.timeouts += 1;
    else if (reason === NO_GATEWAY) stats.noGateway += 1;
    else stats.networkErrors += 1;
  }

  async function runOperation(op: PlannedOp): Promise<void> {
    const record = journal.record(op.index);
    const variables = await variablesOf(op);
    if (variables === null) {
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
        variables,
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
      await untilFinal({ record, rng, variables, phase: 'replay', deadline });
    }
    if (op.kind !== 'create' && op.foreign) await lookUpForeign({ record, rng, deadline });
  }

  /** The other tenant asks for the payment by id: it must not exist for them. */
  async function lookUpForeign(input: {
    record: OperationRecord;
    rng: Prng;
    deadline: number;
  }): Promise<void> {
    const { record, rng } = input;
    const variables = await variablesOf(record.op);
    const paymentId = (variables?.['input'] as { paymentId?: string } | undefined)?.paymentId;
    for (let attempt = 0; Date.now() < input.deadline; attempt++) {
      const sent = await sendOnce({
        rng,
        apiKey: TENANTS[record.op.tenant].apiKey,
        query: PAYMENT_QUERY,
        variables: { id: paymentId },
      });
      if (!('failure' in sent) && sent.status === 200 && sent.body.errors === undefined) {
        record.foreignLookup = sent.body.data?.['payment'];
        return;
      }
      await sleep(backoffMs({ rng, attempt }));
    }
    record.foreignLookup = 'no answer before the deadline';
  }

  /** The request's variables; a follow-up first waits for its payment to exist. */
  async function variablesOf(op: PlannedOp): Promise<Record<string, unknown> | null> {
    if (op.kind === 'create') return { input: createInput(op) };
    const paymentId = op.early
      ? await journal.whenPaymentKnown(op.target)
      : paymentIdOf(await journal.whenResolved(op.target));
    if (paymentId === null) return null;
    const targetOp = journal.record(op.target).op as CreateOp;
    const amount =
      op.amountMinor === null ? undefined : formatMinor(op.amountMinor, targetOp.currency);
    switch (op.kind) {
      case 'capture':
        return { input: { idempotencyKey: op.key, paymentId, ...(amount ? { amount } : {}) } };
      case 'refund':
        return { input: { idempotencyKey: op.key, paymentId, amount, reason: 'chaos' } };
      case 'cancel':
        return { input: { idempotencyKey: op.key, paymentId } };
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

function createInput(op: CreateOp): Record<string, unknown> {
  return {
    idempotencyKey: op.key,
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

/** Exponential backoff with jitter in its upper half, from the operation's own stream. */
function backoffMs(input: { rng: Prng; attempt: number }): number {
  const backoff = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(input.attempt, 10));
  return input.rng.int(Math.floor(backoff / 2), backoff);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
