/**
 * After a duplicate storm: how many charges each key made, counted where money moves (the
 * sandbox PSP's statement, by the merchant reference, which is the key) and where the system
 * keeps its payments. Exactly-once means one of each per key.
 */
import type pg from 'pg';
import type { SystemName } from './targets.ts';

const PAYMENTS_TABLE: Record<SystemName, string> = {
  product: 'payments',
  reference: 'bench_ref_payments',
  'apollo-reference': 'bench_ref_payments',
  bare: 'bench_bare_payments',
};

export interface StormOutcome {
  system: SystemName;
  concurrency: number;
  keys: number;
  /** Charges at the PSP, and payment rows, per key: min and max over the storm's keys. */
  charges: { min: number; max: number };
  payments: { min: number; max: number };
}

/** Per key, how often it was counted: min and max over the keys. */
/** Per key, how many of `found` name it: min and max over the keys. */
function spread(keys: string[], found: Array<{ reference: string }>): { min: number; max: number } {
  const counts = new Map<string, number>();
  for (const { reference } of found) counts.set(reference, (counts.get(reference) ?? 0) + 1);
  const values = keys.map((key) => counts.get(key) ?? 0);
  return { min: Math.min(...values), max: Math.max(...values) };
}

export async function checkStorm(check: {
  pspUrl: string;
  db: pg.Pool;
  system: SystemName;
  concurrency: number;
  keys: string[];
  since: Date;
}): Promise<StormOutcome> {
  const url = new URL('/v1/statement', check.pspUrl);
  url.searchParams.set('from', check.since.toISOString());
  url.searchParams.set('to', new Date(Date.now() + 60_000).toISOString());
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`PSP statement: HTTP ${response.status}`);
  const { data } = (await response.json()) as { data: Array<{ reference: string }> };
  const { rows } = await check.db.query<{ reference: string }>(
    `SELECT reference FROM ${PAYMENTS_TABLE[check.system]} WHERE reference = ANY($1)`,
    [check.keys],
  );
  const { system, concurrency, keys } = check;
  return {
    system,
    concurrency,
    keys: keys.length,
    charges: spread(keys, data),
    payments: spread(keys, rows),
  };
}

/** Exactly once: one charge and one payment row per key. */
export const exactlyOnce = (s: StormOutcome) =>
  s.charges.min === 1 && s.charges.max === 1 && s.payments.max === 1;
