import type pg from 'pg';

/** What readiness needs: the database, and the migration it must find applied. */
export interface SystemDeps {
  pool: pg.Pool;
  config: { latestMigration: string };
}
