import type pg from 'pg';
import type { JsonValue } from '../canonical-json.ts';
import type { FaultPoints } from '../faults.ts';
import { PeriodicJob } from '../periodic-job.ts';
import type { LibMetrics, ServiceLabel } from '../metrics.ts';
import {
  handleBatch,
  kindOf,
  retry,
  retryBackoffMs,
  type BatchDeliveryHandler,
  type Delivery,
  type DeliveryHandler,
  type DeliveryResult,
} from './delivery.ts';
import { takeLogBatch } from './event-log.ts';
import { RemoteDeliveries } from './remote-deliveries.ts';
import {
  CLAIM_DUE_DELIVERIES,
  MARK_ABANDONED,
  MARK_ALL_DELIVERED,
  MARK_RETRY,
} from './outbox.sql.ts';

/** How long a claimed delivery is left to its dispatcher before another may take it: longer
 * than any handler takes (a webhook's timeout is 5 s), short enough that a crash delays little. */
export const DEFAULT_CLAIM_LEASE_MS = 30_000;
/**
 * The longest a log cursor's claim is held (the claim lease, when that is shorter). A claim of
 * delivery rows holds only its own rows; a cursor's claim holds back every later event of its
 * consumer, so a dispatcher that dies holding it stalls the whole ledger (or receipts) until it
 * runs out. A batch takes a fraction of this; one that takes longer is taken again by another
 * dispatcher, and the fence refuses the first one's advance (event-log.sql.ts).
 */
export const LOG_CLAIM_LEASE_MS = 5_000;
/**
 * Deliveries claimed at once. A batch consumer's transaction per claim is then amortised over
 * this many deliveries; a claim is still one short UPDATE of that many rows.
 */
export const BATCH_SIZE = 64;
/**
 * Local deliveries of one batch handled at once. One at a time, each waits out its round trips
 * behind the request path's, and a busy gateway's outbox falls behind its own payments; every
 * consumer's effect carries its own identity, so their order within a batch does not matter.
 */
const HANDLERS_AT_ONCE = 8;
/**
 * Claims in flight at once, each a loop of its own (claims skip each other's rows). One loop
 * spends most of a batch waiting on its round trips (claim, the consumers' statements, the
 * mark), which under a saturated database take long enough that a busy gateway's deliveries
 * outran it; a second loop claims while the first waits.
 */
const CLAIM_LOOPS = 2;
/**
 * An idle dispatcher polls less and less often, up to this: a fleet with nothing to deliver
 * costs PostgreSQL a claim query per loop every couple of seconds, not four a second. The first
 * event after a quiet spell waits at most this long.
 */
export const IDLE_POLL_CAP_MS = 2_000;

/**
 * The wait before the next claim: none after a full batch (more is due: a fixed interval would
 * cap a dispatcher at a batch per interval, and the backlog would grow with the request rate),
 * the interval after a partial one, and twice the last wait, up to IDLE_POLL_CAP_MS, after an
 * empty one.
 */
export function nextPollDelayMs(
  handled: number | undefined,
  poll: { previousDelayMs: number; intervalMs: number },
): number {
  if (handled === undefined) return poll.intervalMs; // the claim failed: try again as usual
  if (handled >= BATCH_SIZE) return 0;
  if (handled > 0) return poll.intervalMs;
  const cap = Math.max(IDLE_POLL_CAP_MS, poll.intervalMs);
  return Math.min(Math.max(poll.previousDelayMs, poll.intervalMs) * 2, cap);
}
/**
 * Delivers outbox events to their consumers, at least once: delivery rows, and the event log to
 * the consumers with a cursor (event-log.ts). Several dispatchers may run (one per gateway
 * process): a claim of delivery rows is one UPDATE over SKIP LOCKED plus a lease. A dispatcher that
 * dies between handling and marking leaves the delivery to be made again, under the same event
 * id, which is why every consumer's effect carries its own identity.
 *
 * Two kinds of work, run apart: the database's own (local delivery rows and the log consumers,
 * CLAIM_LOOPS loops of batches) and deliveries to remote targets (consumers named `kind:target`,
 * a webhook endpoint each), sent fairly across tenants by RemoteDeliveries in a loop of its own.
 * A remote call may hang for its whole timeout; nothing local ever waits for one (ADR 0039).
 */
export class OutboxDispatcher {
  private readonly loops: Array<PeriodicJob<number>>;
  private readonly remote: RemoteDeliveries;
  private remoteLoop: Promise<void> | undefined;
  private stopping = false;

  constructor(
    private readonly deps: {
      pool: pg.Pool;
      faults: FaultPoints;
      metrics: LibMetrics;
      handlers: Record<string, DeliveryHandler>;
      /**
       * Kinds handled a claim at a time; a kind in both records goes here. A kind with a cursor
       * (outbox_cursors) reads its events from the log as well: its delivery rows are then only
       * the events it failed to take.
       */
      batchHandlers?: Record<string, BatchDeliveryHandler>;
      /** The service that owns each consumer kind: the `service` label of its deliveries. */
      serviceOf: (consumerKind: string) => ServiceLabel;
      intervalMs: number;
      claimLeaseMs?: number;
      onError: (error: unknown) => void;
    },
  ) {
    this.loops = Array.from({ length: CLAIM_LOOPS }, () => {
      let lastDelayMs = deps.intervalMs;
      return new PeriodicJob(() => this.dispatchLocal(), {
        intervalMs: deps.intervalMs,
        onError: deps.onError,
        delayAfter: (handled) => {
          lastDelayMs = nextPollDelayMs(handled, {
            previousDelayMs: lastDelayMs,
            intervalMs: deps.intervalMs,
          });
          return lastDelayMs;
        },
      });
    });
    this.remote = new RemoteDeliveries({
      pool: deps.pool,
      claimLeaseMs: deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS,
      handle: (delivery) => this.handle(delivery),
      settle: (delivery, result) => this.settle(delivery, result),
    });
  }

  start(): void {
    this.stopping = false;
    for (const loop of this.loops) loop.start();
    this.remoteLoop = this.sendRemote();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.remote.interrupt();
    await Promise.all([...this.loops.map((loop) => loop.stop()), this.remoteLoop]);
    await this.remote.finishAll().catch(this.deps.onError);
  }

  /**
   * Claims and handles one batch of the database's own work (delivery rows and each log
   * consumer's events) and one claim of remote deliveries, waits for all of it, and returns how
   * many it handled in all. Running loops never call this: remote calls are not waited on there.
   */
  async dispatchOnce(): Promise<number> {
    const [local, remote] = await Promise.all([
      this.dispatchLocal(),
      this.remote.claimAndStart().then(async (runs) => {
        await Promise.all(runs);
        await this.remote.markDelivered();
        return runs.length;
      }),
    ]);
    return local + remote;
  }

  /**
   * The database's own work: one batch of due local delivery rows and one of each log
   * consumer's events, at once. No remote call is ever waited on here: the ledger and receipts
   * keep up whatever the webhook endpoints do.
   */
  private async dispatchLocal(): Promise<number> {
    const handled = await Promise.all([
      this.deliverDue(),
      ...Object.entries(this.deps.batchHandlers ?? {}).map(([name, handler]) =>
        takeLogBatch(
          {
            ...this.deps,
            service: this.deps.serviceOf(name),
            claimLeaseMs: Math.min(
              this.deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS,
              LOG_CLAIM_LEASE_MS,
            ),
            batchSize: BATCH_SIZE,
          },
          { name, handler },
        ),
      ),
    ]);
    return handled.reduce((sum, n) => sum + n, 0);
  }

  /**
   * The remote sender's loop: marks what was delivered, claims what the free slots allow, and
   * pauses until a delivery ends or the poll delay passes (nextPollDelayMs, as a local loop).
   */
  private async sendRemote(): Promise<void> {
    let lastDelayMs = this.deps.intervalMs;
    while (!this.stopping) {
      let started: number | undefined;
      try {
        await this.remote.markDelivered();
        const runs = await this.remote.claimAndStart();
        for (const run of runs) run.catch(this.deps.onError);
        started = runs.length;
      } catch (error) {
        this.deps.onError(error);
      }
      lastDelayMs = nextPollDelayMs(started, {
        previousDelayMs: lastDelayMs,
        intervalMs: this.deps.intervalMs,
      });
      if (!this.stopping) await this.remote.pause(lastDelayMs);
    }
  }

  /** Claims and handles one batch of due local delivery rows; returns how many it handled. */
  private async deliverDue(): Promise<number> {
    const { rows } = await this.deps.pool.query<{
      tenant_id: string;
      event_id: string;
      consumer: string;
      attempts: number;
      event: { type: string; payload: JsonValue; created_at: string };
    }>(CLAIM_DUE_DELIVERIES, [this.deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS, BATCH_SIZE]);
    const batches = new Map<BatchDeliveryHandler, Delivery[]>();
    const singles: Delivery[] = [];
    for (const row of rows) {
      const delivery: Delivery = {
        tenantId: row.tenant_id,
        eventId: row.event_id,
        consumer: row.consumer,
        attempts: row.attempts,
        event: {
          type: row.event.type,
          payload: row.event.payload,
          createdAt: row.event.created_at,
        },
      };
      const batch = this.deps.batchHandlers?.[kindOf(delivery)];
      if (batch === undefined) {
        singles.push(delivery);
        continue;
      }
      const group = batches.get(batch);
      if (group === undefined) batches.set(batch, [delivery]);
      else group.push(delivery);
    }
    const delivered: Delivery[] = [];
    let next = 0;
    const handler = async () => {
      while (next < singles.length) {
        const delivery = singles[next++]!;
        if (await this.settle(delivery, await this.handle(delivery))) delivered.push(delivery);
      }
    };
    await Promise.all([
      ...[...batches].map(async ([batch, group]) => {
        const results = await handleBatch(batch, group);
        for (const [i, delivery] of group.entries()) {
          if (await this.settle(delivery, results[i]!)) delivered.push(delivery);
        }
      }),
      ...Array.from({ length: Math.min(HANDLERS_AT_ONCE, singles.length) }, handler),
    ]);
    // One statement for the batch's delivered ones. A crash before it leaves them pending, to be
    // delivered again under the same identity once their claim lease runs out.
    if (delivered.length > 0) {
      await this.deps.pool.query(MARK_ALL_DELIVERED, [
        delivered.map((d) => d.tenantId),
        delivered.map((d) => d.eventId),
        delivered.map((d) => d.consumer),
      ]);
    }
    return rows.length;
  }

  /** One delivery through its kind's handler: what it came to, a throw being a retry. */
  private async handle(delivery: Delivery): Promise<DeliveryResult> {
    const kind = kindOf(delivery);
    const handler = this.deps.handlers[kind];
    if (handler === undefined) return { kind: 'abandon', why: `no handler for ${kind}` };
    try {
      return await handler(delivery);
    } catch (error) {
      return retry(error);
    }
  }

  /** Records what handling a delivery came to; true when it was delivered (marked with its claim). */
  private async settle(delivery: Delivery, result: DeliveryResult): Promise<boolean> {
    const kind = kindOf(delivery);
    const ids = [delivery.tenantId, delivery.eventId, delivery.consumer];
    // Between the effect and its mark: a crash here makes the delivery happen again.
    await this.deps.faults.hit(`outbox.${kind}.after-handle`);
    this.deps.metrics.outboxDeliveries.inc({
      service: this.deps.serviceOf(kind),
      consumer: kind,
      outcome: result.kind === 'delivered' ? 'delivered' : 'failed',
    });
    switch (result.kind) {
      case 'delivered':
        return true;
      case 'abandon':
        await this.deps.pool.query(MARK_ABANDONED, [...ids, result.why]);
        return false;
      case 'retry': {
        const backoffMs = retryBackoffMs(delivery.attempts);
        await this.deps.pool.query(MARK_RETRY, [...ids, result.error.slice(0, 500), backoffMs]);
        return false;
      }
    }
  }
}
