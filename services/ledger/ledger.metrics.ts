import { Counter, type Registry } from 'prom-client';

/** The ledger service's series, added to the process's registry at composition. */
export function createLedgerMetrics(registry: Registry) {
  const registers = [registry];
  return {
    ledgerPostings: new Counter({
      name: 'ledger_postings_total',
      help: 'Ledger postings written (duplicates excluded), by kind.',
      labelNames: ['service', 'kind'] as const,
      registers,
    }),
  };
}

export type LedgerMetrics = ReturnType<typeof createLedgerMetrics>;

/** Every ledger series at zero, so a dashboard's rate() sees it from the start. */
export function initialiseLedgerSeries(metrics: LedgerMetrics): void {
  for (const kind of ['capture', 'refund'])
    metrics.ledgerPostings.inc({ service: 'ledger', kind }, 0);
}
