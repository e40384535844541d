import type { JsonValue } from '../canonical-json.ts';
import type { TxClient } from '../db/pool.ts';
import { INSERT_DELIVERIES, INSERT_EVENT } from './outbox.sql.ts';

export interface OutboxEvent {
  tenantId: string;
  /** Stable identity: the same event written twice is one event (and one webhook-id). */
  id: string;
  type: string;
  payload: JsonValue;
  consumers: string[];
}

/** Writes an event and its deliveries inside the caller's transaction — the phase that makes it true. */
export async function writeEvent(tx: TxClient, event: OutboxEvent): Promise<void> {
  await tx.query(INSERT_EVENT, [
    event.tenantId,
    event.id,
    event.type,
    JSON.stringify(event.payload),
  ]);
  await tx.query(INSERT_DELIVERIES, [event.tenantId, event.id, event.consumers]);
}
