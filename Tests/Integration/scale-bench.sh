#!/usr/bin/env bash
# Benchmark lines for `make bench`: how logins per second grow with the number of mpin-server
# processes (nodes) sharing one PostgreSQL database on this machine. One throwaway cluster
# (postgres.sh: 127.0.0.1 only, stopped and deleted afterwards), one `init --database`, the data
# directory copied for each further node (as docs: several nodes share the database and the
# keys), every node `serve` on 127.0.0.1. mpin-server-bench then loads 1, 2 and 3 nodes with the
# same clients (BENCH_CLIENTS, 8 by default), spread over them in turn, each client one
# keep-alive connection to its node:
#   server_auth_rate_pg_nodesN   full logins per second with N nodes
#   server_auth_node_cpu_ms_nodesN  CPU the mpin-server processes used per login, all nodes
#   server_auth_pg_cpu_ms_nodesN    CPU PostgreSQL used per login
# (from /proc, over the whole bench run: its registrations and solo logins are a few percent),
# which with the load generator's share says whether the machine's cores are the bound.
# Needs the release mpin-server and mpin-server-bench; run as root or as a user PostgreSQL's
# initdb accepts.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"
. "$ROOT/Tests/Integration/postgres.sh"
NODES=${SCALE_NODES:-3}
trap 'pg_stop; cleanup' EXIT

pg_start >/dev/null 2>&1 || { echo "scale-bench: PostgreSQL did not start" >&2; exit 1; }
"$BIN/mpin-server" init --data "$WORK/node1" --auto-activate --database "$MPIN_TEST_POSTGRES" >/dev/null \
  || { echo "scale-bench: init --database failed" >&2; exit 1; }
ports=""
# cpu_ticks PID...: user + system clock ticks of these processes and their reaped children.
cpu_ticks() { local total=0 p; for p in "$@"; do total=$((total + $(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo "$total"; }
# pg_pids: the cluster's postmaster and its children (a backend per pooled connection).
pg_pids() { local pm; pm=$(head -1 "$PG_DIR/data/postmaster.pid"); echo "$pm" $(ps -o pid= --ppid "$pm"); }
TICK=$(getconf CLK_TCK)
SECONDS_RUN=${BENCH_SECONDS:-5}
for n in $(seq 1 "$NODES"); do
  [ "$n" -gt 1 ] && cp -a "$WORK/node1" "$WORK/node$n"
  port=$(free_port)
  # TZ: swift-log stats /etc/localtime for every line otherwise (PERFORMANCE.md §2.2).
  TZ=:/etc/localtime "$BIN/mpin-server" serve --data "$WORK/node$n" --host 127.0.0.1 --port "$port" >"$WORK/node$n.log" 2>&1 &
  PIDS+=($!)
  wait_ready "$WORK/node$n.log" "mpin-server node $n" >&2 || exit 1
  ports="${ports:+$ports,}$port"
  node_before=$(cpu_ticks "${PIDS[@]}"); pg_before=$(cpu_ticks $(pg_pids))
  out=$(BENCH_PORT="$ports" BENCH_SECONDS="$SECONDS_RUN" "$BIN/mpin-server-bench" 2>&1) || { echo "scale-bench: $out" >&2; exit 1; }
  node_after=$(cpu_ticks "${PIDS[@]}"); pg_after=$(cpu_ticks $(pg_pids))
  rate=$(awk '$1 == "server_auth_rate" { print $2 }' <<<"$out")
  [ -n "$rate" ] && [ "$rate" -gt 0 ] || { echo "scale-bench: no rate in: $out" >&2; exit 1; }
  echo "server_auth_rate_pg_nodes$n $rate"
  awk -v node="$((node_after - node_before))" -v pg="$((pg_after - pg_before))" -v tick="$TICK" -v logins="$((rate * SECONDS_RUN))" -v n="$n" \
    'BEGIN { printf "server_auth_node_cpu_ms_nodes%d %.2f\nserver_auth_pg_cpu_ms_nodes%d %.2f\n", n, node * 1000 / tick / logins, n, pg * 1000 / tick / logins }'
done
