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
  bare: 'bench_bare_payments',
};

export interface StormCount {
  keys: number;
  /** Charges at the PSP, and payment rows, per key: min and max over the storm's keys. */
  charges: { min: number; max: number };
  payments: { min: number; max: number };
}

function spread(counts: Map<string, number>, keys: string[]): { min: number; max: number } {
  const values = keys.map((key) => counts.get(key) ?? 0);
  return { min: Math.min(...values), max: Math.max(...values) };
}

export async function countStorm(check: {
  pspUrl: string;
  db: pg.Pool;
  system: SystemName;
  keys: string[];
  since: Date;
}): Promise<StormCount> {
  const url = new URL('/v1/statement', check.pspUrl);
  url.searchParams.set('from', check.since.toISOString());
  url.searchParams.set('to', new Date(Date.now() + 60_000).toISOString());
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`PSP statement: HTTP ${response.status}`);
  const { data } = (await response.json()) as { data: Array<{ reference: string }> };
  const wanted = new Set(check.keys);
  const charges = new Map<string, number>();
  for (const charge of data) {
    if (wanted.has(charge.reference)) {
      charges.set(charge.reference, (charges.get(charge.reference) ?? 0) + 1);
    }
  }
  const { rows } = await check.db.query<{ reference: string; n: number }>(
    `SELECT reference, count(*)::int AS n FROM ${PAYMENTS_TABLE[check.system]}
      WHERE reference = ANY($1) GROUP BY reference`,
    [check.keys],
  );
  const payments = new Map(rows.map((row) => [row.reference, row.n]));
  return {
    keys: check.keys.length,
    charges: spread(charges, check.keys),
    payments: spread(payments, check.keys),
  };
}
