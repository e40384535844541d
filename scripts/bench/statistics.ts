import type pg from 'pg';
import { SELECT_AUTOVACUUM } from '../../services/kernel/db/autovacuum-check.ts';

/**
 * Statistics for what the warm-up wrote, gathered as autovacuum would have gathered them. Where
 * the server runs with autovacuum off (some test servers do), no table is ever analyzed, and a
 * prepared statement's generic plan, made on a connection's sixth call while the tables were
 * still empty, is never replaced: on a table that has never been analyzed every index whose
 * first column is tenant_id costs the same, and the product's UPDATE of a payment's outcome
 * (WHERE tenant_id = $1 AND id = $2) had its plan on payments_tenant_created_ix, bounded by the
 * tenant alone, and read every payment of the bench's tenant on each call
 * (docs/decisions/0006-pipelined-statements-on-pg-internals.md). ANALYZE
 * invalidates every session's cached plans, so each system plans again on its next call, with
 * statistics, as it would in production a minute after its first rows. Returns the server's
 * autovacuum setting, for the report.
 */
export async function analyzeAfterWarmUp(db: pg.Pool): Promise<string> {
  await db.query('ANALYZE');
  const { rows } = await db.query<{ enabled: boolean }>(SELECT_AUTOVACUUM);
  return rows[0]?.enabled === true ? 'on' : 'off';
}
