#!/bin/bash
# Replays in rounds, on the independent harness's load generator, against one built checkout:
# how a replay's gateway CPU moves from the first round after new payments to later ones (the
# harness itself measures only the first 3,000 replays). Used for docs/performance.md's
# "Replays after 0051"; run it for two checkouts in turn, several times, to compare builds.
# For the 6,000 new payments first and for each round, it also splits the gateway's CPU into
# user and system time (/proc, 10 ms ticks): what the process computes, and what the kernel
# does for it (its sockets, its log writes). So that those ticks are the measured requests',
# the load generator warms itself up with 16 requests to a 404, not its default 2,000.
#
#   bash scripts/bench/harness-replay-rounds.sh HARNESS_DIR CHECKOUT OUT_DIR [ROUNDS] [--cpu-prof]
#
# HARNESS_DIR: a copy of the independent harness with `npm ci` done (docs/performance.md).
# CHECKOUT: a checkout with `npm run build` done. Needs PostgreSQL on 127.0.0.1 as a superuser
# (PGUSER), and uses a database named bench_replay_rounds, dropped at the end. Every process it
# starts listens on 127.0.0.1 and is stopped before it exits.
set -euo pipefail
HARNESS=$(cd "$1" && pwd); CHECKOUT=$(cd "$2" && pwd); OUT=$(mkdir -p "$3" && cd "$3" && pwd)
ROUNDS=${4:-8}; PROFILE=${5:-}
export PGHOST=127.0.0.1 PGUSER=${PGUSER:-root}
DB=bench_replay_rounds
cd "$HARNESS"
dropdb --if-exists "$DB" 2>/dev/null; createdb "$DB"
node psp.mjs --port 0 --latency-ms 2 >"$OUT/psp.out" 2>/dev/null &
PSP_PID=$!
GW=
trap 'kill -INT $GW 2>/dev/null || true; kill $PSP_PID 2>/dev/null || true; wait 2>/dev/null || true; dropdb --if-exists $DB 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do [[ -s "$OUT/psp.out" ]] && break; sleep 0.1; done
PSP="http://127.0.0.1:$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1],"utf8").split("\n")[0]).port' "$OUT/psp.out")"
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
tenants=$(for t in 0 1 2 3; do printf 'tenant%s:sk_bench_tenant%s_0123456789abcdef,' $t $t; done)
args=(); [[ "$PROFILE" == --cpu-prof ]] && args=(--cpu-prof "--cpu-prof-dir=$OUT/prof")
(cd "$CHECKOUT" && exec env PORT="$port" DATABASE_URL="postgresql://$PGUSER@127.0.0.1:5432/$DB" \
  PSP_URL="$PSP" BOOTSTRAP_TENANTS="${tenants%,}" INTERNAL_TOKEN=bench-internal-token-0123456789 \
  DATA_ENCRYPTION_KEYS="bench1:$(printf '%032d' 0 | base64)" node "${args[@]}" dist/app/main.js) \
  >"$OUT/product.log" 2>&1 &
GW=$!
for _ in $(seq 1 150); do
  [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" == 200 ]] && break
  sleep 0.2
done
load() {
  node load.mjs --url "http://127.0.0.1:$port" --db "$DB" --label product --psp "$PSP" \
    --settle-ms 0 --pids "target=$GW,psp=$PSP_PID" --adapter ./product-adapter.mjs "$@"
}
ticks() { awk '{print $14, $15}' "/proc/$GW/stat"; }
# Runs the load generator with "$@" and prints its rate, its CPU split by process, and the
# gateway's user and system CPU a request over the same stretch.
measured() {
  local before out u0 s0 u1 s1 n
  before=$(ticks)
  out=$(load --self-warmup 16 "$@" 2>&1)
  read -r u0 s0 <<<"$before"
  read -r u1 s1 < <(ticks)
  n=$(grep -o '\] [0-9]* req in' <<<"$out" | grep -o '[0-9]*')
  grep -o '= [0-9.]* req/s\|cpu ms/req {[^}]*}' <<<"$out" | tr '\n' ' '
  awk -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v n="$n" \
    'BEGIN { printf "gateway user %.3f + system %.3f ms/req\n", u * 10 / n, s * 10 / n }'
}
printf 'new payments: '
measured --key-prefix warm --mode new --n 6000 --duration 30 --c 16 --save-keys "$OUT/keys.txt"
psql -d "$DB" -qc ANALYZE
for r in $(seq 1 "$ROUNDS"); do
  printf 'round %s: ' "$r"
  measured --key-prefix "r$r" --mode replay --n 500 --duration 10 --c 16 --keys-file "$OUT/keys.txt"
done
