/**
 * What a failover costs the merchant: the longest time without a successful payment around
 * it, and what the clients were answered meanwhile. A success is a createPayment answered with
 * a payment (not a refusal), timed when the client received it.
 */
import type { Journal } from './journal.ts';

/** Every success so far, in order of arrival. */
export function successTimes(journal: Journal): number[] {
  const times: number[] = [];
  for (const record of journal.records) {
    if (record.op.kind !== 'create') continue;
    for (const final of record.finals) {
      if (final.receivedAt !== undefined && final.status === 200 && final.data !== null)
        times.push(final.receivedAt);
    }
  }
  return times.sort((a, b) => a - b);
}
