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

/**
 * A boolean SQL expression: whether a row this statement reads needs no proof that a failover
 * would keep it. True on a primary with no synchronous standby: none configured, or
 * pg_auto_failover's `wait_primary`, which empties the setting (cancelling the commits that
 * waited) when its standby is lost or still catching up. Such a standby cannot be promoted, so
 * this primary's history is the only one a failover could keep.
 *
 * False wherever a commit waits for a standby. Normally a visible commit is one the standby
 * acknowledged, but not always: a backend ended while its COMMIT waits (an operator's
 * pg_terminate_backend, a stuck session killed during a standby's stall or a switchover's first
 * moments) leaves its commit visible on the primary alone, and a failover undoes it. A reader
 * that answers from such a row proves it replicated first (docs/decisions/0074). Comparing the
 * standbys' flush positions here would spare that proof, but a subquery on pg_stat_replication
 * in the statement costs every read its executor set-up, standby or not. False on a standby
 * too.
 */
export const WITHOUT_SYNCHRONOUS_STANDBY = `
(NOT pg_is_in_recovery() AND current_setting('synchronous_standby_names') = '')`;
