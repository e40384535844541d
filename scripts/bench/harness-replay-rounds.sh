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
#   bash scripts/bench/harness-replay-rounds.sh HARNESS_DIR CHECKOUT OUT_DIR [ROUNDS] [--cpu-prof|--perf|--alloc]
#
# --cpu-prof: the gateway runs under `node --cpu-prof` (a wall-clock sampler), profile in OUT/prof.
# --perf: the gateway runs with --perf-basic-prof, and `perf record` watches it on the CPU
# (every thread, on-cpu time only) during 3,000 more new payments after the first 6,000, and
# during each replay round; on-cpu-layers.ts then prints where that time went, µs a request.
# --alloc: the same stretches, sampled by V8's heap profiler with freed objects counted
# (allocation-sample.ts), KB allocated a request by package.
# NODE_FLAGS adds flags to the gateway's node (V8's --trace-opt, say, which NODE_OPTIONS refuses).
# TARGET=ref-apollo runs the harness's reference behind Apollo instead of the product, under
# the same load and options, for a side-by-side reading.
#
# HARNESS_DIR: a copy of the independent harness with `npm ci` done (docs/performance.md).
# CHECKOUT: a checkout with `npm run build` done. Needs PostgreSQL on 127.0.0.1 as a superuser
# (PGUSER), and uses a database named bench_replay_rounds, dropped at the end. Every process it
# starts listens on 127.0.0.1 and is stopped before it exits.
set -euo pipefail
HARNESS=$(cd "$1" && pwd); CHECKOUT=$(cd "$2" && pwd); OUT=$(mkdir -p "$3" && cd "$3" && pwd)
ROUNDS=${4:-8}; PROFILE=${5:-}; TARGET=${TARGET:-product}
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
[[ "$PROFILE" == --perf ]] && args=(--perf-basic-prof)
if [[ "$PROFILE" == --alloc ]]; then
  inspect=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  args=("--inspect=127.0.0.1:$inspect")
fi
# shellcheck disable=SC2206 # NODE_FLAGS: more flags for the gateway's node, split on spaces.
args+=(${NODE_FLAGS:-})
if [[ "$TARGET" == ref-apollo ]]; then
  node "${args[@]}" ref-apollo.mjs --port "$port" --db "$DB" --psp "$PSP" --pool-max 16 \
    --init-schema >"$OUT/ref-apollo.log" 2>&1 &
else
  (cd "$CHECKOUT" && exec env PORT="$port" DATABASE_URL="postgresql://$PGUSER@127.0.0.1:5432/$DB" \
    PSP_URL="$PSP" BOOTSTRAP_TENANTS="${tenants%,}" INTERNAL_TOKEN=bench-internal-token-0123456789 \
    DATA_ENCRYPTION_KEYS="bench1:$(printf '%032d' 0 | base64)" node "${args[@]}" dist/app/main.js) \
    >"$OUT/product.log" 2>&1 &
fi
GW=$!
for _ in $(seq 1 150); do
  # The reference has no /readyz: any HTTP answer means it listens.
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)
  [[ "$code" == 200 || ( "$TARGET" == ref-apollo && "$code" != 000 ) ]] && break
  sleep 0.2
done
load() {
  node load.mjs --url "http://127.0.0.1:$port" --db "$DB" --label "$TARGET" --psp "$PSP" \
    --settle-ms 0 --pids "target=$GW,psp=$PSP_PID" --adapter ./product-adapter.mjs "$@"
}
ticks() { awk '{print $14, $15}' "/proc/$GW/stat"; }
# Runs the load generator with "$@" and prints its rate, its CPU split by process, and the
# gateway's user and system CPU a request over the same stretch.
# With --perf (--alloc) and a name as its first argument, perf (the heap sampler) watches the
# gateway meanwhile into OUT/NAME.perf.data (.heapprofile), and a summary follows the line.
measured() {
  local before out u0 s0 u1 s1 n name= perf= alloc=
  if [[ "$1" != --* ]]; then name=$1; shift; fi
  [[ "$PROFILE" != --perf ]] || [[ -z "$name" ]] || {
    perf record -q -e cpu-clock -F 999 -g -p "$GW" -o "$OUT/$name.perf.data" 2>/dev/null &
    perf=$!
    sleep 0.5
  }
  [[ "$PROFILE" != --alloc ]] || [[ -z "$name" ]] || {
    (cd "$CHECKOUT" && NODE_OPTIONS=--experimental-websocket exec node --import tsx \
      scripts/bench/allocation-sample.ts record "$inspect" "$OUT/$name.heapprofile") \
      >"$OUT/$name.sampler" 2>&1 &
    alloc=$!
    for _ in $(seq 1 100); do grep -q sampling "$OUT/$name.sampler" && break; sleep 0.1; done
  }
  before=$(ticks)
  out=$(load --self-warmup 16 "$@" 2>&1)
  read -r u0 s0 <<<"$before"
  read -r u1 s1 < <(ticks)
  [[ -z "$perf" ]] || { kill -INT "$perf" 2>/dev/null || true; wait "$perf" 2>/dev/null || true; }
  [[ -z "$alloc" ]] || { kill -INT "$alloc" 2>/dev/null || true; wait "$alloc" 2>/dev/null || true; }
  n=$(grep -o '\] [0-9]* req in' <<<"$out" | grep -o '[0-9]*')
  grep -o '= [0-9.]* req/s\|cpu ms/req {[^}]*}' <<<"$out" | tr '\n' ' '
  awk -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v n="$n" \
    'BEGIN { printf "gateway user %.3f + system %.3f ms/req\n", u * 10 / n, s * 10 / n }'
  [[ -z "$perf" ]] || (cd "$CHECKOUT" && npx tsx scripts/bench/on-cpu-layers.ts \
    "$OUT/$name.perf.data" "$n" 15)
  [[ -z "$alloc" ]] || (cd "$CHECKOUT" && npx tsx scripts/bench/allocation-sample.ts report \
    "$OUT/$name.heapprofile" "$n")
}
printf 'new payments: '
measured --key-prefix warm --mode new --n 6000 --duration 30 --c 16 --save-keys "$OUT/keys.txt"
if [[ "$PROFILE" == --perf || "$PROFILE" == --alloc ]]; then
  printf 'new payments, 3,000 more: '
  measured new --key-prefix more --mode new --n 3000 --duration 30 --c 16
fi
psql -d "$DB" -qc ANALYZE
for r in $(seq 1 "$ROUNDS"); do
  printf 'round %s: ' "$r"
  measured "round-$r" --key-prefix "r$r" --mode replay --n 500 --duration 10 --c 16 \
    --keys-file "$OUT/keys.txt"
done
