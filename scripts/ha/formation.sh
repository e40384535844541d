#!/usr/bin/env bash
# A highly available PostgreSQL on loopback, for the failover tests and the chaos suite's
# failover tier: a pg_auto_failover monitor, a primary and one standby, from Debian's packages
# (postgresql-15-auto-failover, pg-auto-failover-cli). The gateway only ever sees the libpq URL
# this prints; an operator running Patroni, or a managed service, gives it the same kind of URL.
#
#   formation.sh install                      install the packages when missing (idempotent)
#   formation.sh start DIR [--async]          create and start a formation under DIR; prints its URL
#   formation.sh url DIR                      the URL again
#   formation.sh state DIR                    pg_autoctl show state
#   formation.sh kill-node DIR NODE           SIGKILL a node's pg_autoctl and its postmaster
#   formation.sh run-node DIR NODE            start a node again (an old primary rejoins: pg_rewind)
#   formation.sh freeze-node DIR NODE         SIGSTOP every process of a node: a stalled machine
#   formation.sh thaw-node DIR NODE           SIGCONT them
#   formation.sh hold-wal DIR NODE            SIGSTOP a primary's WAL senders: its standby falls behind
#   formation.sh release-wal DIR NODE         SIGCONT them
#   formation.sh switchover DIR               a planned failover (routine maintenance)
#   formation.sh events DIR [COUNT]           the monitor's last COUNT events (default 40)
#   formation.sh copy-logs DIR DEST           copy the keepers' and servers' logs to DEST
#   formation.sh stop DIR                     stop everything started under DIR and delete DIR
#
# NODE is node_1 or node_2. Ports: HA_BASE_PORT (default 6100) for the monitor, the next two for
# the nodes. `--async` makes the standby asynchronous (replication-quorum false): commits are
# acknowledged before the standby has them, as on a managed service with asynchronous replicas
# or after a restore; the negative control uses it to lose acknowledged commits on purpose.
#
# Why it is shaped this way, each learnt on this machine:
# - pg_autoctl runs as `postgres`: pg_ctl refuses to run as root.
# - Every process listens on 127.0.0.1 only (--listen), and trust auth is limited to loopback.
# - Each node runs in a session of its own (setsid), whose id is kept in DIR/NODE.pid, so a
#   "crash" is one kill of the whole group: pg_autoctl would otherwise restart a killed
#   postmaster on the same node within a second, and no failover would happen.
# - The monitor's health checks are tightened so that a crashed primary fails over in seconds,
#   not the default half-minute.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PG_BIN=/usr/lib/postgresql/15/bin
BASE_PORT="${HA_BASE_PORT:-6100}"
MONITOR_PORT="$BASE_PORT"
DBNAME=payments
READY_TIMEOUT_SECONDS=60

usage() {
  sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

install_packages() {
  if command -v pg_autoctl >/dev/null 2>&1 && [ -x "$PG_BIN/pg_ctl" ] &&
    [ -e /usr/share/postgresql/15/extension/pgautofailover.control ]; then
    return 0
  fi
  APT_CALLER=formation
  # shellcheck source=../apt.sh
  . "$HERE/../apt.sh"
  apt_install postgresql-15-auto-failover pg-auto-failover-cli ||
    { apt_update && apt_install postgresql-15-auto-failover pg-auto-failover-cli; }
}

# Signals processes owned by postgres: root may, anyone else does it as postgres.
signal_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then kill "$@" 2>/dev/null || true
  else as_postgres kill "$@" 2>/dev/null || true; fi
}

# Signals the session of each keeper (node_2, node_1, monitor) that was started under DIR.
signal_keepers() {
  local signal="$1" dir="$2" part
  for part in node_2 node_1 monitor; do
    local sid
    sid="$(cat "$dir/$part.pid" 2>/dev/null || true)"
    is_pid "$sid" && signal_as_owner "-$signal" -- "-$sid"
  done
  return 0
}

# Runs a command as the postgres role's OS user, from root or through passwordless sudo.
as_postgres() {
  if [ "$(id -un)" = postgres ]; then
    env PG_CONFIG="$PG_BIN/pg_config" "$@"
  elif [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- env PG_CONFIG="$PG_BIN/pg_config" "$@"
  else
    sudo -n -u postgres env PG_CONFIG="$PG_BIN/pg_config" "$@"
  fi
}

monitor_uri() { echo "postgres://autoctl_node@127.0.0.1:$MONITOR_PORT/pg_auto_failover?sslmode=disable"; }
node_port() { echo $((BASE_PORT + ${1#node_})); }
formation_url() {
  echo "postgresql://postgres@127.0.0.1:$(node_port node_1),127.0.0.1:$(node_port node_2)/$DBNAME?target_session_attrs=read-write"
}

# Starts `pg_autoctl run` for PGDATA in a session of its own; the session id goes to PIDFILE.
# `setsid -f` forks, so runuser's own child exits at once and runuser with it: pg_autoctl is
# then the child of init, which reaps it when it is killed. Left under runuser, a keeper that
# is SIGSTOPped stops runuser too (su's job control), and once killed it stays a zombie that a
# restarted keeper takes for a live one ("already running").
run_keeper() {
  local pgdata="$1" pidfile="$2" log="$3"
  rm -f "$pidfile"
  as_postgres setsid -f sh -c 'echo $$ > "$1"; exec pg_autoctl run --pgdata "$2" >>"$3" 2>&1' \
    keeper "$pidfile" "$pgdata" "$log" </dev/null >/dev/null 2>&1
  for _ in $(seq 1 50); do [ -s "$pidfile" ] && return 0; sleep 0.1; done
  echo "formation: pg_autoctl for $pgdata did not start; see $log" >&2
  return 1
}

monitor_sql() {
  psql -X -q -At -h 127.0.0.1 -p "$MONITOR_PORT" -U postgres -d pg_auto_failover -c "$1"
}

wait_for_states() {
  local want="$1" deadline=$((SECONDS + READY_TIMEOUT_SECONDS)) got=""
  while [ $SECONDS -lt $deadline ]; do
    got="$(monitor_sql "SELECT string_agg(reportedstate::text, ',' ORDER BY nodeid) FROM pgautofailover.node" 2>/dev/null || true)"
    [ "$got" = "$want" ] && return 0
    sleep 0.5
  done
  echo "formation: nodes are '$got' after ${READY_TIMEOUT_SECONDS}s, expected '$want'" >&2
  return 1
}

create_node() {
  local dir="$1" node="$2"
  as_postgres pg_autoctl create postgres --pgdata "$dir/$node" --pgport "$(node_port "$node")" \
    --hostname 127.0.0.1 --listen 127.0.0.1 --auth trust --no-ssl --dbname "$DBNAME" \
    --name "$node" --monitor "$(monitor_uri)" >>"$dir/$node.log" 2>&1
  run_keeper "$dir/$node" "$dir/$node.pid" "$dir/$node.log"
}

start() {
  local dir="$1" mode="${2:-}"
  [ -e "$dir" ] && { echo "formation: $dir exists; stop it first" >&2; exit 1; }
  install_packages
  # Owned by postgres, logs included: the keepers append to them as postgres.
  as_postgres mkdir -p "$dir"
  as_postgres touch "$dir/monitor.log" "$dir/node_1.log" "$dir/node_2.log"
  as_postgres pg_autoctl create monitor --pgdata "$dir/monitor" --pgport "$MONITOR_PORT" \
    --hostname 127.0.0.1 --listen 127.0.0.1 --auth trust --no-ssl >>"$dir/monitor.log" 2>&1
  run_keeper "$dir/monitor" "$dir/monitor.pid" "$dir/monitor.log"
  local deadline=$((SECONDS + READY_TIMEOUT_SECONDS))
  until monitor_sql 'SELECT 1' >/dev/null 2>&1; do
    [ $SECONDS -ge $deadline ] && { echo "formation: the monitor did not start" >&2; exit 1; }
    sleep 0.2
  done
  local setting
  for setting in health_check_period=1000 health_check_timeout=1000 health_check_retry_delay=500 \
    node_considered_unhealthy_timeout=3000 primary_demote_timeout=5000; do
    monitor_sql "ALTER SYSTEM SET pgautofailover.${setting%%=*} = ${setting#*=}" >/dev/null
  done
  monitor_sql 'SELECT pg_reload_conf()' >/dev/null
  create_node "$dir" node_1
  wait_for_states single
  create_node "$dir" node_2
  wait_for_states primary,secondary
  if [ "$mode" = --async ]; then
    as_postgres pg_autoctl set node replication-quorum false --pgdata "$dir/node_2" >>"$dir/node_2.log" 2>&1
    local deadline2=$((SECONDS + READY_TIMEOUT_SECONDS))
    until [ "$(psql -X -At -h 127.0.0.1 -p "$(node_port node_1)" -U postgres -d "$DBNAME" \
      -c 'SHOW synchronous_standby_names' 2>/dev/null)" = "" ]; do
      [ $SECONDS -ge $deadline2 ] && { echo "formation: the standby stayed synchronous" >&2; exit 1; }
      sleep 0.2
    done
  fi
  formation_url
}

kill_node() {
  local dir="$1" node="$2" sid
  sid="$(cat "$dir/$node.pid")"
  is_pid "$sid" || { echo "formation: no session id for $node" >&2; return 1; }
  # The whole node at once: the keeper's session and the postmaster's children (each in a
  # session of its own; a stopped one would otherwise outlive the postmaster).
  local pids
  pids="$(node_processes "$dir" "$node" | sort -u | tr '\n' ' ')"
  signal_as_owner -KILL -- "-$sid"
  # shellcheck disable=SC2086
  [ -n "$pids" ] && signal_as_owner -KILL $pids
  # A postmaster that lost its keeper still runs until it notices; wait for its port to close.
  local deadline=$((SECONDS + 20))
  while pg_isready -q -h 127.0.0.1 -p "$(node_port "$node")" 2>/dev/null; do
    [ $SECONDS -ge $deadline ] && { echo "formation: $node still answers after SIGKILL" >&2; return 1; }
    sleep 0.1
  done
}

# Every process of a node: its keeper's session, and the postmaster's children, which each run
# in a session of their own (PostgreSQL's children call setsid), so a signal to the keeper's
# session alone would leave the walreceiver streaming.
node_processes() {
  local dir="$1" node="$2" sid postmaster
  sid="$(cat "$dir/$node.pid" 2>/dev/null || true)"
  postmaster="$(head -n 1 "$dir/$node/postmaster.pid" 2>/dev/null || true)"
  # Never a guess: an empty id would make pgrep pick the caller's own session.
  is_pid "$sid" && pgrep -s "$sid"
  is_pid "$postmaster" && { echo "$postmaster"; pgrep -P "$postmaster"; }
  return 0
}

is_pid() { [[ "${1:-}" =~ ^[0-9]+$ ]] && [ "$1" -gt 1 ]; }

signal_node() {
  local signal="$1" dir="$2" node="$3" pids
  pids="$(node_processes "$dir" "$node" | sort -u | tr '\n' ' ')"
  [ -n "$pids" ] || return 0
  # shellcheck disable=SC2086
  signal_as_owner "-$signal" $pids
}

# The primary's WAL senders alone: every node stays healthy to the monitor while the standby
# receives nothing, as over a congested link. Used with --async by the negative control: the
# WAL the standby never got is lost with the primary. (Holding the standby's receiver instead
# loses nothing: what was sent waits in its socket and is read after the crash.)
signal_walsenders() {
  local signal="$1" dir="$2" node="$3" postmaster pids
  postmaster="$(head -n 1 "$dir/$node/postmaster.pid")"
  pids="$(pgrep -P "$postmaster" -f 'walsender' || true)"
  [ -n "$pids" ] || { echo "formation: $node has no WAL sender" >&2; return 1; }
  # shellcheck disable=SC2086
  signal_as_owner "-$signal" $pids
}

# What a failed run keeps: each keeper's log (DIR/NODE.log, its state transitions) and each
# server's own log (PGDATA/log), under DEST/NODE/, readable by the caller.
copy_logs() {
  local dir="$1" dest="$2" node
  for node in monitor node_1 node_2; do
    mkdir -p "$dest/$node"
    cp "$dir/$node.log" "$dest/$node/keeper.log" 2>/dev/null || true
    cp "$dir/$node"/log/*.log "$dest/$node/" 2>/dev/null || true
  done
}

run_node() {
  local dir="$1" node="$2"
  # The killed postmaster left postmaster.pid behind; pg_ctl clears a stale one on start.
  run_keeper "$dir/$node" "$dir/$node.pid" "$dir/$node.log"
}

stop() {
  local dir="$1"
  [ -d "$dir" ] || return 0
  signal_keepers TERM "$dir"
  local deadline=$((SECONDS + 20))
  while pgrep -f "pg_autoctl run --pgdata $dir/" >/dev/null 2>&1 && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
  signal_keepers KILL "$dir"
  if [ "$(id -u)" -eq 0 ]; then rm -rf "$dir"; else as_postgres rm -rf "$dir"; fi
}

case "${1:-}" in
  install) install_packages ;;
  start) [ $# -ge 2 ] || usage; start "$2" "${3:-}" ;;
  url) formation_url ;;
  state) [ $# -ge 2 ] || usage; as_postgres pg_autoctl show state --pgdata "$2/monitor" ;;
  kill-node) [ $# -ge 3 ] || usage; kill_node "$2" "$3" ;;
  run-node) [ $# -ge 3 ] || usage; run_node "$2" "$3" ;;
  freeze-node) [ $# -ge 3 ] || usage; signal_node STOP "$2" "$3" ;;
  thaw-node) [ $# -ge 3 ] || usage; signal_node CONT "$2" "$3" ;;
  hold-wal) [ $# -ge 3 ] || usage; signal_walsenders STOP "$2" "$3" ;;
  release-wal) [ $# -ge 3 ] || usage; signal_walsenders CONT "$2" "$3" ;;
  switchover) [ $# -ge 2 ] || usage; as_postgres pg_autoctl perform switchover --pgdata "$2/monitor" >>"$2/monitor.log" 2>&1 ;;
  events) [ $# -ge 2 ] || usage; as_postgres pg_autoctl show events --count "${3:-40}" --pgdata "$2/monitor" ;;
  copy-logs) [ $# -ge 3 ] || usage; copy_logs "$2" "$3" ;;
  stop) [ $# -ge 2 ] || usage; stop "$2" ;;
  *) usage ;;
esac
