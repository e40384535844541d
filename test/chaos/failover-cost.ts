/**
 * When payments succeed again after a failover: the first createPayment, launched or retried
 * after the fault, whose answer was a payment (not a refusal) and came after the fault.
 */
import type { Journal } from './journal.ts';

/** How long to wait for that success before calling the outage unbounded (null). */
const SUCCESS_WAIT_MS = 180_000;
const POLL_MS = 100;

export async function firstSuccessAfter(journal: Journal, at: number): Promise<number | null> {
  const deadline = Date.now() + SUCCESS_WAIT_MS;
  while (Date.now() < deadline) {
    let first: number | null = null;
    for (const record of journal.records) {
      if (record.op.kind !== 'create') continue;
      for (const final of record.finals) {
        const when = final.receivedAt;
        if (when === undefined || when <= at || final.status !== 200 || final.data === null)
          continue;
        if (first === null || when < first) first = when;
      }
    }
    if (first !== null) return first;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return null;
}
