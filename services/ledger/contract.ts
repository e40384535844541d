/** The ledger service's contract: the types the composition needs, without its router. */
export type { LedgerMetrics } from './ledger.metrics.ts';
export type { LedgerDeps } from './ledger.deps.ts';
