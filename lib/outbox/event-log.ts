import type pg from 'pg';
import type { JsonValue } from '../canonical-json.ts';
import type { FaultPoints } from '../faults.ts';
import type { LibMetrics, ServiceLabel } from '../metrics.ts';
import {
  handleBatch,
  retry,
  retryBackoffMs,
  type BatchDeliveryHandler,
  type Delivery,
  type DeliveryResult,
} from './delivery.ts';
import { ADVANCE_LOG_CURSOR, CLAIM_LOG_BATCH } from './event-log.sql.ts';

/**
 * Takes one batch of a log consumer's events (event-log.sql.ts): claims its cursor with the
 * events after it, hands them to the consumer's batch handler, and moves the cursor past them.
 * Events the consumer did not take become delivery rows in the same statement that moves the
 * cursor, and are retried from there like any other delivery. A dispatcher that dies between
 * the handler and the advance leaves the cursor where it was: once the lease runs out the same
 * events are taken again, under the same identities, which is why a log consumer's effect must
 * be idempotent per event. Returns how many log events it walked past, its own and others'.
 */
export async function takeLogBatch(
  deps: {
    pool: pg.Pool;
    faults: FaultPoints;
    metrics: LibMetrics;
    service: ServiceLabel;
    claimLeaseMs: number;
    batchSize: number;
  },
  consumer: { name: string; handler: BatchDeliveryHandler },
): Promise<number> {
  const { rows } = await deps.pool.query<{
    claim: string;
    tenant_id: string;
    id: string;
    type: string;
    payload: JsonValue;
    created_at: string;
    written_by: string;
    log_seq: string;
    mine: boolean;
  }>(CLAIM_LOG_BATCH, [consumer.name, deps.claimLeaseMs, deps.batchSize]);
  const last = rows.at(-1);
  if (last === undefined) return 0;
  const deliveries: Delivery[] = rows
    .filter((row) => row.mine)
    .map((row) => ({
      tenantId: row.tenant_id,
      eventId: row.id,
      consumer: consumer.name,
      attempts: 1,
      event: { type: row.type, payload: row.payload, createdAt: row.created_at },
    }));
  let results: DeliveryResult[] = [];
  if (deliveries.length > 0) {
    results = await handleBatch(consumer.handler, deliveries);
    // Between the effect and the cursor's advance: a crash here makes the batch happen again.
    await deps.faults.hit(`outbox.${consumer.name}.after-handle`);
  }
  const failed: Array<{ delivery: Delivery; status: 'pending' | 'abandoned'; error: string }> = [];
  for (const [i, delivery] of deliveries.entries()) {
    const result = results[i] ?? retry('no result from the batch handler');
    deps.metrics.outboxDeliveries.inc({
      service: deps.service,
      consumer: consumer.name,
      outcome: result.kind === 'delivered' ? 'delivered' : 'failed',
    });
    if (result.kind === 'retry') failed.push({ delivery, status: 'pending', error: result.error });
    if (result.kind === 'abandon')
      failed.push({ delivery, status: 'abandoned', error: result.why });
  }
  await deps.pool.query(ADVANCE_LOG_CURSOR, [
    consumer.name,
    last.claim,
    last.written_by,
    last.log_seq,
    failed.map((f) => f.delivery.tenantId),
    failed.map((f) => f.delivery.eventId),
    failed.map((f) => f.status),
    failed.map((f) => f.error.slice(0, 500)),
    retryBackoffMs(1),
  ]);
  return rows.length;
}
