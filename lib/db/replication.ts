import type { ReplicationReading } from '../metrics.ts';
import type { Queryable } from './pool.ts';
import { SELECT_REPLICATION } from './replication.sql.ts';

/**
 * How many copies acknowledge a commit, as the primary sees it (replication.sql.ts). `pool`
 * must be the request path's pool: it reaches the primary, since it writes. A reading that
 * reached a standby anyway is null, not zero: a standby's WAL senders are not the primary's,
 * and zero would page for a formation that may be whole.
 *
 * Without pg_monitor (or superuser) the role cannot read whether a standby is synchronous, and
 * `synchronous` is null, not 0: counted blind it reads 0 with a synchronous standby attached,
 * and the alert would take the formation for one that never had one, and never fire.
 */
export async function readReplication(pool: Queryable): Promise<ReplicationReading | null> {
  const { rows } = await pool.query<{
    in_recovery: boolean;
    visible: boolean;
    standbys: number;
    synchronous: number;
  }>(SELECT_REPLICATION);
  const row = rows[0];
  if (row === undefined || row.in_recovery) return null;
  return {
    visible: row.visible,
    standbys: row.standbys,
    synchronous: row.visible ? row.synchronous : null,
  };
}
