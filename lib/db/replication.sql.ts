/**
 * The primary's view of its standbys, for the replication gauges (replication.ts).
 *
 * - `standbys`: WAL senders to physical standbys, whatever their state (streaming, catching up,
 *   a base backup building one). A logical decoding consumer (CDC) has a WAL sender too, but is
 *   no copy a failover could promote: left out by its slot's type.
 * - `synchronous`: of those, the ones the primary waits for at commit (`sync` under
 *   `FIRST n (…)`, `quorum` under `ANY n (…)`, pg_auto_failover's form). A listed standby still
 *   catching up is `potential` and not counted.
 * - `visible`: whether this role may read the WAL senders' state. Any role sees their rows, but
 *   only superusers and roles with the privileges of pg_read_all_stats (granted by pg_monitor)
 *   see more than the pid: for the others sync_state is NULL and `synchronous` would read 0
 *   with a synchronous standby attached. `USAGE`, not `MEMBER`, is the check the server makes:
 *   a NOINHERIT role granted pg_monitor is a member and still sees NULLs.
 * - `in_recovery`: the connection reached a standby, whose WAL senders (cascading) say nothing
 *   about the primary's copies.
 */
export const SELECT_REPLICATION = `
SELECT pg_is_in_recovery() AS in_recovery,
       pg_has_role('pg_read_all_stats', 'USAGE') AS visible,
       count(*)::int AS standbys,
       (count(*) FILTER (WHERE r.sync_state IN ('sync', 'quorum')))::int AS synchronous
  FROM pg_stat_replication r
 WHERE NOT EXISTS (SELECT FROM pg_replication_slots s
                    WHERE s.active_pid = r.pid AND s.slot_type = 'logical')`;
