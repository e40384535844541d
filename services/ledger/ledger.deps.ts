import type pg from 'pg';
import type { LedgerMetrics } from './ledger.metrics.ts';

/** What the ledger service needs: its tables through the request pool, and its series. */
export interface LedgerDeps {
  pool: pg.Pool;
  metrics: LedgerMetrics;
}
