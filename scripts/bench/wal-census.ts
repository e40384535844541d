/**
 * Where a stretch of WAL went, by relation and by kind of record, read back with pg_walinspect
 * (PostgreSQL 15+, a superuser's extension): the WAL-per-statement-kind view of a run, since
 * every statement kind writes its own tables and indexes. Full-page images are counted apart:
 * the first change to a page after a checkpoint logs the whole page, so they measure how many
 * distinct pages a workload touches rather than how much it changes.
 */
import type pg from 'pg';

export interface WalCensus {
  totalBytes: number;
  fpiBytes: number;
  /** Largest first: relation (or resource manager, for records without a relation). */
  byTarget: Array<{ target: string; bytes: number; fpiBytes: number; records: number }>;
}

/**
 * Where the census will start: the current insert position, or null when pg_walinspect cannot
 * be used here (installed now, before the measured stretch, so that its own WAL is not counted).
 */
export async function walPosition(db: pg.Pool): Promise<string | null> {
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
  } catch {
    return null;
  }
  const { rows } = await db.query<{ lsn: string }>(
    'SELECT pg_current_wal_insert_lsn()::text AS lsn',
  );
  return rows[0]!.lsn;
}

/**
 * The census from `from` to what is flushed now, with relations named from this database's catalog (another
 * database's relations show as their file numbers). Null when pg_walinspect cannot be used.
 */
export async function walCensus(db: pg.Pool, from: string | null): Promise<WalCensus | null> {
  if (from === null) return null;
  // Up to what is flushed: pg_walinspect reads no further.
  await db.query('SELECT pg_switch_wal()');
  const { rows } = await db.query<{ target: string; bytes: string; fpi: string; records: number }>(
    `WITH r AS (
       SELECT resource_manager, record_length, fpi_length,
              substring(block_ref FROM 'rel \\d+/\\d+/(\\d+)')::oid AS filenode
         FROM pg_get_wal_records_info($1::pg_lsn, pg_current_wal_flush_lsn()))
     SELECT coalesce(c.relname, r.resource_manager || CASE WHEN r.filenode IS NULL THEN ''
                                  ELSE ' rel ' || r.filenode END) AS target,
            sum(r.record_length)::text AS bytes, sum(r.fpi_length)::text AS fpi,
            count(*)::int AS records
       FROM r LEFT JOIN pg_class c ON c.relfilenode = r.filenode
      GROUP BY 1 ORDER BY sum(r.record_length) DESC`,
    [from],
  );
  const byTarget = rows.map((r) => ({
    target: r.target,
    bytes: Number(r.bytes),
    fpiBytes: Number(r.fpi),
    records: r.records,
  }));
  return {
    totalBytes: byTarget.reduce((sum, t) => sum + t.bytes, 0),
    fpiBytes: byTarget.reduce((sum, t) => sum + t.fpiBytes, 0),
    byTarget,
  };
}
