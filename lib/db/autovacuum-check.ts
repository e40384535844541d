import type pg from 'pg';
import type { Logger } from '../logging/logger.ts';

/** Whether the server gathers statistics by itself. */
export const SELECT_AUTOVACUUM = `SELECT current_setting('autovacuum') = 'on' AS enabled`;

/**
 * Warns, once at start, when the server runs with autovacuum off. The services prepare their
 * statements once per connection, and PostgreSQL replaces a prepared statement's plan only when
 * the statistics it was made with change. Without autovacuum (and without a manual ANALYZE) a
 * plan made while a table was empty is kept for the connection's life: on a `payments` table
 * never analyzed, the UPDATE of a payment's outcome chose an index bounded by the tenant alone
 * and read every payment of the tenant on each call.
 */
export async function warnIfAutovacuumOff(pool: pg.Pool, log: Logger): Promise<void> {
  const { rows } = await pool.query<{ enabled: boolean }>(SELECT_AUTOVACUUM);
  if (rows[0]?.enabled !== true) {
    log.warn(
      { setting: 'autovacuum' },
      'autovacuum is off: run ANALYZE after loading data, or plans made on empty tables stay',
    );
  }
}
