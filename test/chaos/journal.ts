/**
 * What the clients saw: every answer to every request, per logical operation. The auditor
 * reads it after the run; the summary counts come from it too.
 */
import type { PlannedOp } from './plan.ts';

export interface FinalRecord {
  status: number;
  /** Null for a result, else the stored refusal's code. */
  code: string | null;
  replayed: boolean;
  /** When the client received it (ms since the epoch). */
  receivedAt?: number;
  canonical: string;
  data: Record<string, unknown> | null;
  /** 'first' for the request's own sends, 'replay' for the extra sends after it was final. */
  phase: 'first' | 'replay';
}

export interface OperationRecord {
  op: PlannedOp;
  finals: FinalRecord[];
  /** Answers the contract does not allow for this request; each is a violation. */
  unexpected: Array<{ status: number; code: string; body: string }>;
  /** Set when the operation has its first final answer. */
  settled: boolean;
  /** Why the client stopped without a final answer (deadline), if it did. */
  abandoned: string | null;
  /** A follow-up whose create never produced a payment is not sent at all. */
  skipped: boolean;
  /** Foreign operations: what `payment(id)` answered the tenant that does not own it. */
  foreignLookup: unknown;
  startedAt: number;
  settledAt: number | null;
}

export class Stats {
  requests = 0;
  retries = 0;
  replays = 0;
  outcomePending = 0;
  inUse = 0;
  providerUnavailable = 0;
  databaseUnavailable = 0;
  /** Split tiers: a gateway's call to a payments process got no answer (a kill, a cut hop). */
  serviceUnavailable = 0;
  internalErrors = 0;
  networkErrors = 0;
  timeouts = 0;
  /** Sends that found no gateway up (both restarting or paused): waited, not sent. */
  noGateway = 0;
  launched = 0;
  settled = 0;
}

export class Journal {
  readonly records: OperationRecord[];
  readonly stats = new Stats();
  private readonly waiters = new Map<number, Array<() => void>>();
  /** createPayment → its payment id, as soon as any answer (even OUTCOME_PENDING) named it. */
  private readonly paymentIds = new Map<number, string>();
  private readonly paymentWaiters = new Map<number, Array<(id: string | null) => void>>();

  constructor(plan: PlannedOp[]) {
    this.records = plan.map((op) => ({
      op,
      finals: [],
      unexpected: [],
      settled: false,
      abandoned: null,
      skipped: false,
      foreignLookup: undefined,
      startedAt: 0,
      settledAt: null,
    }));
  }

  record(index: number): OperationRecord {
    const record = this.records[index];
    if (record === undefined) throw new Error(`no operation ${index}`);
    return record;
  }

  /** The operation has its first final answer: operations waiting on it may go. */
  settle(index: number, at: number): void {
    const record = this.record(index);
    if (record.settled) return;
    record.settled = true;
    record.settledAt = at;
    this.stats.settled += 1;
    this.wake(index);
  }

  /** The client stopped without a final answer; operations waiting on it go without one. */
  giveUp(index: number, why: { abandoned?: string; skipped?: boolean }): void {
    const record = this.record(index);
    if (why.abandoned !== undefined) record.abandoned = why.abandoned;
    if (why.skipped === true) record.skipped = true;
    this.wake(index);
  }

  /** Resolves once operation `index` is settled or given up. */
  whenResolved(index: number): Promise<OperationRecord> {
    const record = this.record(index);
    if (record.settled || record.abandoned !== null || record.skipped) {
      return Promise.resolve(record);
    }
    return new Promise((resolve) => {
      const list = this.waiters.get(index) ?? [];
      list.push(() => resolve(record));
      this.waiters.set(index, list);
    });
  }

  /** A createPayment's payment is known (from a pending answer or the final one). */
  notePayment(index: number, paymentId: string): void {
    if (this.paymentIds.has(index)) return;
    this.paymentIds.set(index, paymentId);
    for (const wake of this.paymentWaiters.get(index) ?? []) wake(paymentId);
    this.paymentWaiters.delete(index);
  }

  /** The payment of createPayment `index` once known; null if it ends without one. */
  whenPaymentKnown(index: number): Promise<string | null> {
    const known = this.paymentIds.get(index);
    if (known !== undefined) return Promise.resolve(known);
    const record = this.record(index);
    if (record.settled || record.abandoned !== null || record.skipped) return Promise.resolve(null);
    return new Promise((resolve) => {
      const list = this.paymentWaiters.get(index) ?? [];
      list.push(resolve);
      this.paymentWaiters.set(index, list);
    });
  }

  private wake(index: number): void {
    for (const wake of this.waiters.get(index) ?? []) wake();
    this.waiters.delete(index);
    // An operation that ends without naming a payment releases those waiting for one.
    if (!this.paymentIds.has(index)) {
      for (const wake of this.paymentWaiters.get(index) ?? []) wake(null);
      this.paymentWaiters.delete(index);
    }
  }
}
