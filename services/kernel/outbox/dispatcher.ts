import type pg from 'pg';
import type { JsonValue } from '../canonical-json.ts';
import type { FaultPoints } from '../faults.ts';
import { PeriodicJob } from '../periodic-job.ts';
import type { KernelMetrics, ServiceName } from '../metrics.ts';
import {
  CLAIM_DUE_DELIVERIES,
  MARK_ABANDONED,
  MARK_ALL_DELIVERED,
  MARK_RETRY,
} from './outbox.sql.ts';

/** How long a claimed delivery is left to its dispatcher before another may take it: longer
 * than any handler takes (a webhook's timeout is 5 s), short enough that a crash delays little. */
export const DEFAULT_CLAIM_LEASE_MS = 30_000;
const BATCH_SIZE = 32;
/**
 * Deliveries of one batch handled at once. One at a time, each waits out its round trips
 * behind the request path's, and a busy gateway's outbox falls behind its own payments; every
 * consumer's effect carries its own identity, so their order within a batch does not matter.
 */
const HANDLERS_AT_ONCE = 8;
/**
 * An idle dispatcher polls less and less often, up to this: a fleet with nothing to deliver
 * costs PostgreSQL a claim query a couple of seconds per process, not four a second. The first
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
/** Backoff between attempts at one delivery: base × 2^(attempts − 1), capped. */
const RETRY_BASE_MS = 500;
const RETRY_CAP_MS = 10 * 60_000;

export interface Delivery {
  tenantId: string;
  eventId: string;
  consumer: string;
  attempts: number;
  event: { type: string; payload: JsonValue; createdAt: string };
}

/** What handling a delivery came to. */
export type DeliveryResult =
  { kind: 'delivered' } | { kind: 'retry'; error: string } | { kind: 'abandon'; why: string };

/** Handles the deliveries of one consumer kind (the part of `consumer` before ':'). */
export type DeliveryHandler = (delivery: Delivery) => Promise<DeliveryResult>;

/**
 * Delivers outbox events to their consumers, at least once. Several dispatchers may run (one
 * per gateway process): a claim is one UPDATE over SKIP LOCKED plus a lease. A dispatcher that
 * dies between handling and marking leaves the delivery to be made again, under the same event
 * id, which is why every consumer's effect carries its own identity.
 */
export class OutboxDispatcher {
  private readonly job: PeriodicJob<number>;
  private lastDelayMs: number;

  constructor(
    private readonly deps: {
      pool: pg.Pool;
      faults: FaultPoints;
      metrics: KernelMetrics;
      handlers: Record<string, DeliveryHandler>;
      /** The service that owns each consumer kind: the `service` label of its deliveries. */
      serviceOf: (consumerKind: string) => ServiceName;
      intervalMs: number;
      claimLeaseMs?: number;
      onError: (error: unknown) => void;
    },
  ) {
    this.lastDelayMs = deps.intervalMs;
    this.job = new PeriodicJob(() => this.dispatchOnce(), {
      intervalMs: deps.intervalMs,
      onError: deps.onError,
      delayAfter: (handled) => {
        this.lastDelayMs = nextPollDelayMs(handled, {
          previousDelayMs: this.lastDelayMs,
          intervalMs: deps.intervalMs,
        });
        return this.lastDelayMs;
      },
    });
  }

  start(): void {
    this.job.start();
  }

  stop(): Promise<void> {
    return this.job.stop();
  }

  /** Claims and handles one batch; returns how many deliveries it handled. */
  async dispatchOnce(): Promise<number> {
    const { rows } = await this.deps.pool.query<{
      tenant_id: string;
      event_id: string;
      consumer: string;
      attempts: number;
      event: { type: string; payload: JsonValue; created_at: string };
    }>(CLAIM_DUE_DELIVERIES, [this.deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS, BATCH_SIZE]);
    const deliveries: Delivery[] = rows.map((row) => ({
      tenantId: row.tenant_id,
      eventId: row.event_id,
      consumer: row.consumer,
      attempts: row.attempts,
      event: { type: row.event.type, payload: row.event.payload, createdAt: row.event.created_at },
    }));
    const delivered: Delivery[] = [];
    let next = 0;
    const handler = async () => {
      while (next < deliveries.length) {
        const delivery = deliveries[next++]!;
        if (await this.handle(delivery)) delivered.push(delivery);
      }
    };
    await Promise.all(Array.from({ length: Math.min(HANDLERS_AT_ONCE, rows.length) }, handler));
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

  /** Handles one delivery; true when it was delivered (marked with its batch), else marked here. */
  private async handle(delivery: Delivery): Promise<boolean> {
    const kind = delivery.consumer.split(':')[0] ?? delivery.consumer;
    const handler = this.deps.handlers[kind];
    const ids = [delivery.tenantId, delivery.eventId, delivery.consumer];
    let result: DeliveryResult;
    try {
      result =
        handler === undefined
          ? { kind: 'abandon', why: `no handler for ${kind}` }
          : await handler(delivery);
    } catch (error) {
      result = { kind: 'retry', error: error instanceof Error ? error.message : String(error) };
    }
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
        const backoffMs = Math.min(
          RETRY_BASE_MS * 2 ** Math.max(0, delivery.attempts - 1),
          RETRY_CAP_MS,
        );
        await this.deps.pool.query(MARK_RETRY, [...ids, result.error.slice(0, 500), backoffMs]);
        return false;
      }
    }
  }
}
