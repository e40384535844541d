import type { JsonValue } from '../canonical-json.ts';
import type { Statement } from '../db/pipelined-statements.ts';
import type { Queryable, TxClient } from '../db/pool.ts';
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

/** Pending deliveries per consumer kind, and the age of the oldest: the backlog gauges. */
export async function readBacklog(
  pool: Queryable,
): Promise<Array<{ consumer: string; pending: number; oldestAgeSeconds: number }>> {
  const { rows } = await pool.query<{
    consumer: string;
    pending: number;
    oldest_age_seconds: number;
  }>(BACKLOG);
  return rows.map((r) => ({
    consumer: r.consumer,
    pending: r.pending,
    oldestAgeSeconds: r.oldest_age_seconds,
  }));
}
