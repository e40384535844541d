/** The ledger service's surface: what the rest of the house may import from it. */
export { ledgerRouter } from './ledger.router.ts';
export { ledgerHandler } from './ledger-consumer.ts';
/** Its tables' entities: the composition lists them (app/entities.ts) for the process's one ORM. */
export { LedgerPosting } from './ledger-posting.entity.ts';
export { createLedgerMetrics } from './ledger.metrics.ts';
export * from './contract.ts';
export { initialiseLedgerSeries } from './ledger.metrics.ts';
