import type { JsonValue } from '../canonical-json.ts';

/*
 * A delivery of an outbox event to one consumer, however it was found (a delivery row claimed, or
 * an event read from the log through the consumer's cursor), and what handling it came to.
 */

/** Backoff between attempts at one delivery: base × 2^(attempts − 1), capped. */
const RETRY_BASE_MS = 500;
const RETRY_CAP_MS = 10 * 60_000;

export function retryBackoffMs(attempts: number): number {
  return Math.min(RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1), RETRY_CAP_MS);
}

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
 * Handles a claim's deliveries of one consumer kind at once, in one transaction of the
 * consumer's own: one result per delivery, in their order. A consumer whose effect is a row per
 * delivery writes them all with one multi-row statement, instead of a transaction each.
 */
export type BatchDeliveryHandler = (deliveries: Delivery[]) => Promise<DeliveryResult[]>;

/**
 * One kind's deliveries of a claim, through its batch handler at once. If the batch fails, each
 * delivery goes through it again alone: one delivery that cannot be made (an input the consumer
 * refuses, a constraint it breaks) must not hold back the others, which would otherwise fail
 * with it on every claim.
 */
export async function handleBatch(
  batch: BatchDeliveryHandler,
  group: Delivery[],
): Promise<DeliveryResult[]> {
  try {
    const results = await batch(group);
    if (results.length === group.length) return results;
  } catch {
    // Each alone, below: a delivery's own failure is then recorded as its own.
  }
  const results: DeliveryResult[] = [];
  for (const delivery of group) {
    try {
      results.push((await batch([delivery]))[0] ?? retry('no result from the batch handler'));
    } catch (error) {
      results.push(retry(error));
    }
  }
  return results;
}

/** A delivery's consumer kind: the part of its consumer before ':' (webhook:<endpoint>). */
export function kindOf(delivery: Delivery): string {
  return delivery.consumer.split(':')[0] ?? delivery.consumer;
}

export function retry(error: unknown): DeliveryResult {
  return { kind: 'retry', error: error instanceof Error ? error.message : String(error) };
}
