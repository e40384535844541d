import type { JsonValue } from '../../lib/canonical-json.ts';
import { shownDeliveryError } from './webhook-failure.ts';

/** A delivery row with its event's type and time (DELIVERY_COLUMNS, manage-endpoints.sql.ts). */
export interface DeliveryRow {
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  event_created_at: Date;
}

/** A delivery as the tenant sees it (GraphQL's WebhookDelivery): its error as a class only. */
export interface DeliveryView {
  [field: string]: JsonValue;
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  eventCreatedAt: string;
}

export function deliveryOf(row: DeliveryRow): DeliveryView {
  return {
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    lastError: shownDeliveryError(row.last_error),
    nextAttemptAt: row.next_attempt_at?.toISOString() ?? null,
    deliveredAt: row.delivered_at?.toISOString() ?? null,
    eventCreatedAt: row.event_created_at.toISOString(),
  };
}
