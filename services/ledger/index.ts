/** The ledger service's surface: what the rest of the house may import from it. */
export { ledgerRouter } from './ledger.router.ts';
export { ledgerHandler } from './ledger-consumer.ts';
