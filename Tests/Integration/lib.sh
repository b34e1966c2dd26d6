# Helpers for the integration tests: results, free ports, the server, cleanup.
# Sourced by the *-tests.sh scripts; they set ROOT (the package) before sourcing.

BIN="$ROOT/.build/release"
# Nothing may depend on the working directory or the checkout's place: it can sit under a
# directory only root may enter (a 0700 home). Everything runs from /, with absolute paths, and
# whatever runs as another user must live in a directory that user can reach (not the checkout).
cd / || exit 1
PASSED=0
FAILED=0
PIDS=()
WORK=$(mktemp -d /tmp/mpin-it.XXXXXX)
chmod 700 "$WORK"

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

ok()   { PASSED=$((PASSED + 1)); echo "ok - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "not ok - $*"; }
# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() { local d=$1; shift; if "$@"; then ok "$d"; else fail "$d"; fi; }
# check_all DESCRIPTION 'CONDITION': passes when the shell condition (a && b ...) holds as a whole.
check_all() { local d=$1; if eval "$2"; then ok "$d"; else fail "$d"; fi; }

summary() {
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# start_server: a fresh mpin-server on 127.0.0.1 with auto-activation; sets BACKEND, PORT
# and SERVER_PID.
start_server() {
  PORT=$(free_port)
  "$BIN/mpin-server" init --data "$WORK/server" --auto-activate >/dev/null || return 1
  restart_server
}

# restart_server: serve the existing data directory on the same port again.
restart_server() {
  : > "$WORK/server.log"
  "$BIN/mpin-server" serve --data "$WORK/server" --host 127.0.0.1 --port "$PORT" >>"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  BACKEND="http://127.0.0.1:$PORT"
  for _ in $(seq 1 100); do
    grep -q 'ready' "$WORK/server.log" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "mpin-server did not start:"; cat "$WORK/server.log"; return 1
}

# stop_server: SIGTERM, then at most 10 s for a graceful stop (a hang is a failure, not a hung
# test run: the server is then killed).
stop_server() {
  kill "$SERVER_PID" 2>/dev/null
  for _ in $(seq 1 100); do
    kill -0 "$SERVER_PID" 2>/dev/null || { wait "$SERVER_PID" 2>/dev/null; return 0; }
    sleep 0.1
  done
  echo "mpin-server did not stop within 10 s of SIGTERM" >&2
  kill -9 "$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
  return 1
}

# start_tls_proxy: the server (PORT) behind a TLS terminator on 127.0.0.1:TLSPORT (socat, a
# throw-away P-256 certificate for 127.0.0.1 in $WORK/tls.pem). `nodelay` on both sides:
# without it Nagle's algorithm adds 40 ms stalls through the proxy.
start_tls_proxy() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$WORK/tls.key" \
    -out "$WORK/tls.pem" -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 || return 1
  TLSPORT=$(free_port)
  socat "OPENSSL-LISTEN:$TLSPORT,bind=127.0.0.1,reuseaddr,fork,nodelay,cert=$WORK/tls.pem,key=$WORK/tls.key,verify=0" \
    "TCP:127.0.0.1:$PORT,nodelay" 2>/dev/null &
  PIDS+=($!)
  for _ in $(seq 1 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$TLSPORT") 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# write_config FILE BACKEND [extra lines...]
write_config() {
  local file=$1 backend=$2; shift 2
  { echo "backend = $backend"; echo "store = $WORK/store"; echo "timeout = 3"; printf '%s\n' "$@"; } > "$file"
}

# millis: monotonic-enough wall clock in milliseconds.
millis() { date +%s%3N; }
