import type { JsonValue } from '../canonical-json.ts';
import type { Statement } from '../db/pipelined-statements.ts';
import type { Queryable, TxClient } from '../db/pool.ts';
import { LOG_BACKLOG } from './event-log.sql.ts';
import { BACKLOG, INSERT_EVENT_WITH_DELIVERIES, SUBSCRIBE } from './outbox.sql.ts';

export interface OutboxEvent {
  tenantId: string;
  /** Stable identity: the same event written twice is one event (and one webhook-id). */
  id: string;
  type: string;
  payload: JsonValue;
  consumers: string[];
  /**
   * Those of `consumers` that only some tenants have (the webhook fan-out): written only for a
   * tenant subscribed to them (subscribeToOutbox), so no delivery is made to do nothing.
   */
  onSubscription?: string[];
}

/** Writes an event and its deliveries inside the caller's transaction — the phase that makes it true. */
export async function writeEvent(tx: TxClient, event: OutboxEvent): Promise<void> {
  const { text, values } = eventStatement(event);
  await tx.query(text, values);
}

/** The statement writeEvent runs, for a phase sent as statements (one round trip). */
export function eventStatement(event: OutboxEvent): Statement {
  return {
    text: INSERT_EVENT_WITH_DELIVERIES,
    values: [
      event.tenantId,
      event.id,
      event.type,
      JSON.stringify(event.payload),
      event.consumers.filter((consumer) => !event.onSubscription?.includes(consumer)),
      event.onSubscription ?? [],
    ],
  };
}

/** From now on, the tenant's events are delivered to `consumer` too (see onSubscription). */
export async function subscribeToOutbox(
  tx: TxClient,
  subscription: { tenantId: string; consumer: string },
): Promise<void> {
  await tx.query(SUBSCRIBE, [subscription.tenantId, subscription.consumer]);
}

/**
 * What is yet to be delivered per consumer kind, and the age of the oldest: the backlog gauges.
 * A log consumer's backlog is its pending delivery rows (the retries) and the events after its
 * cursor together.
 */
export async function readBacklog(
  pool: Queryable,
): Promise<Array<{ consumer: string; pending: number; oldestAgeSeconds: number }>> {
  type Row = { consumer: string; pending: number; oldest_age_seconds: number };
  const [deliveries, log] = await Promise.all([
    pool.query<Row>(BACKLOG),
    pool.query<Row>(LOG_BACKLOG),
  ]);
  const backlog = new Map<
    string,
    { consumer: string; pending: number; oldestAgeSeconds: number }
  >();
  for (const row of [...deliveries.rows, ...log.rows]) {
    const seen = backlog.get(row.consumer);
    backlog.set(row.consumer, {
      consumer: row.consumer,
      pending: (seen?.pending ?? 0) + row.pending,
      oldestAgeSeconds: Math.max(seen?.oldestAgeSeconds ?? 0, row.oldest_age_seconds),
    });
  }
  return [...backlog.values()];
}
