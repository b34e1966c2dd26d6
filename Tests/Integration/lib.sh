# Helpers for the integration tests: results, free ports, the server, cleanup.
# Sourced by the *-tests.sh scripts; they set ROOT (the package) before sourcing.

# MPIN_BIN=DIR takes the programs from another build (side-by-side runs).
BIN="${MPIN_BIN:-$ROOT/.build/release}"
# pam_mpin.so as `make module` builds it, and the pam.d words that load it with the build
# tree's mpin-pam-helper (the module's compiled-in helper is the installed one).
# MPIN_PAM_SO=FILE tests another build of the module (pam-bench.sh side by side).
PAM_SO="${MPIN_PAM_SO:-$ROOT/.build/pam/pam_mpin.so}"
# The module follows no symbolic link to its helper, and SwiftPM's .build/release is one (to
# .build/<triple>/release): the helper is named by its real path. MPIN_PAM_HELPER=FILE runs
# another build of the helper (pam-bench.sh side by side; FILE in a directory of root's).
HELPER_PATH="${MPIN_PAM_HELPER:-$(readlink -f "$BIN")/mpin-pam-helper}"
MODULE_LINE="$PAM_SO helper=$HELPER_PATH"
# Nothing may depend on the working directory or the checkout's place: it can sit under a
# directory only root may enter (a 0700 home). Everything runs from /, with absolute paths, and
# whatever runs as another user must live in a directory that user can reach (not the checkout).
cd / || exit 1
PASSED=0
FAILED=0
PIDS=()
WORK=$(mktemp -d /tmp/mpin-it.XXXXXX)
chmod 700 "$WORK"
# What another (throwaway) user runs or keeps goes here: others may pass through but neither
# list nor write it (0711), as $WORK (0700) and a checkout under a 0700 home do not let them.
OTHERS=$(mktemp -d /tmp/mpin-others.XXXXXX)
chmod 711 "$OTHERS"
# Helpers the tests make pam_mpin.so run: the module runs only a helper whose directories, from
# / down, are root's and writable only by root (pam_mpin(8)), which /tmp (world-writable) is
# not. So they live beside the build products, which must be in such directories too (the
# suites run as root, from a checkout root owns).
TRUSTED=$(mkdir -p "$ROOT/.build" && mktemp -d "$ROOT/.build/mpin-it-helpers.XXXXXX") && chmod 755 "$TRUSTED" || TRUSTED=""

cleanup() {
  [ -n "${NSS_DIR:-}" ] && rm -rf "$NSS_DIR"
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$WORK" "$OTHERS" ${TRUSTED:+"$TRUSTED"}
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
  # The key hosts pin (read on the server itself, as an admin does): over plain http nothing
  # else says who answers, so mpinctl and mpin register nobody without it.
  VERDICT_KEY=$("$BIN/mpin-server" verdict-key --data "$WORK/server")
  wait_ready "$WORK/server.log" mpin-server
}

# wait_ready LOG NAME: waits (at most 30 s by the clock) for mpin-server's ready line in LOG; if
# it does not come, says that NAME did not start, shows the log and fails.
wait_ready() {
  local deadline=$((SECONDS + 30))
  until grep -q "mpin-server ready" "$1" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "$2 did not start:"; cat "$1"; return 1; }
    sleep 0.1
  done
}

# wait_port PORT: waits (at most 30 s by the clock) until something accepts connections on
# 127.0.0.1:PORT (the connection is closed at once, nothing sent); fails otherwise.
wait_port() {
  local deadline=$((SECONDS + 30))
  until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "# nothing listens on 127.0.0.1:$1 after 30 s" >&2; return 1; }
    sleep 0.1
  done
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

# start_relay MODE: Tests/Integration/rewrite-relay.py on RELAY_PORT forwarding to PORT (the
# server, moved to another port), its lines in $WORK/relay.log; sets RELAY_PID. stop_relay ends it.
start_relay() {
  python3 "$ROOT/Tests/Integration/rewrite-relay.py" "$RELAY_PORT" "$PORT" "$1" > "$WORK/relay.log" 2>&1 &
  RELAY_PID=$!; PIDS+=("$RELAY_PID")
  wait_port "$RELAY_PORT" && return 0
  echo "the relay did not start:"; cat "$WORK/relay.log"; return 1
}
stop_relay() { kill "$RELAY_PID" 2>/dev/null; wait "$RELAY_PID" 2>/dev/null; }

# start_swtpm NAME: a software TPM (swtpm) with its state in $WORK/NAME, on a free port P for
# commands and P+1 for control (the swtpm TCTI's convention), 127.0.0.1 only; sets TCTI_NAME
# (e.g. TCTI_A) to its TCTI string and SWTPM_PID_NAME to its process.
start_swtpm() {
  local name=$1 port pid
  for _ in $(seq 1 50); do
    port=$(free_port)
    python3 -c 'import socket, sys; s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.close()' $((port + 1)) 2>/dev/null && break
  done
  mkdir -p "$WORK/$name"
  swtpm socket --tpm2 --server "type=tcp,port=$port,bindaddr=127.0.0.1" --ctrl "type=tcp,port=$((port + 1)),bindaddr=127.0.0.1" \
    --tpmstate "dir=$WORK/$name" --flags not-need-init,startup-clear >"$WORK/$name.log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  eval "SWTPM_PID_$name=$pid"
  eval "TCTI_$name=swtpm:host=127.0.0.1,port=$port"
  wait_port "$port" && return 0
  echo "swtpm $name did not start:"; cat "$WORK/$name.log"; return 1
}

# start_tls_server: a second mpin-server serving HTTPS itself on 127.0.0.1:TLSPORT, on its own
# data directory made with `init --self-signed 127.0.0.1`; sets TLSPORT, TLS_PID, TLSDATA and
# CACERT (the certificate path init prints for clients). Its log is $WORK/tls-server.log.
start_tls_server() {
  TLSDATA="$WORK/tls-server"
  "$BIN/mpin-server" init --data "$TLSDATA" --auto-activate --self-signed 127.0.0.1 >"$WORK/tls-init.out" || return 1
  CACERT=$(sed -n 's/^clients: .*cacert = //p' "$WORK/tls-init.out")
  [ -f "$CACERT" ] || { echo "init --self-signed printed no cacert:"; cat "$WORK/tls-init.out"; return 1; }
  TLSPORT=$(free_port)
  : > "$WORK/tls-server.log"
  "$BIN/mpin-server" serve --data "$TLSDATA" --host 127.0.0.1 --port "$TLSPORT" >>"$WORK/tls-server.log" 2>&1 &
  TLS_PID=$!
  PIDS+=("$TLS_PID")
  wait_ready "$WORK/tls-server.log" "mpin-server (TLS)"
}

# served_fingerprint PORT [s_client options]: SHA-256 of the certificate a TLS client is shown.
served_fingerprint() {
  local port=$1; shift
  openssl s_client -connect "127.0.0.1:$port" "$@" </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256 2>/dev/null \
    | sed 's/.*=//'
}

# cert_fingerprint FILE: SHA-256 of a PEM certificate file.
cert_fingerprint() { openssl x509 -in "$1" -noout -fingerprint -sha256 | sed 's/.*=//'; }

# write_config FILE BACKEND [extra lines...]: with a plain http backend, the suite's server's
# `verdict_key` ($VERDICT_KEY) too, unless a line sets one or NO_VERDICT_KEY=1 is given.
write_config() {
  local file=$1 backend=$2 key=""; shift 2
  if [ -n "${VERDICT_KEY:-}" ] && [ -z "${NO_VERDICT_KEY:-}" ] && [ "${backend#http://}" != "$backend" ] \
     && ! printf '%s\n' "$@" | grep -q '^verdict_key'; then
    key="verdict_key = $VERDICT_KEY"
  fi
  { echo "backend = $backend"; echo "store = $WORK/store"; echo "timeout = 3"; printf '%s\n' "$@"; if [ -n "$key" ]; then echo "$key"; fi; } > "$file"
}

# millis: monotonic-enough wall clock in milliseconds.
millis() { date +%s%3N; }

# --- pamtester suites (pam-*tests.sh, device-tests.sh, ...) ---------------------------------

# pam_setup: the module under test, a private PAM service directory for libpam-wrapper
# ($SERVICES) and the host's store (0700), and where libpam-wrapper's pam_set_items.so is
# ($PAM_SET_ITEMS: it sets PAM items such as PAM_RHOST from PAM_* variables).
pam_setup() {
  MODULE=$MODULE_LINE
  SERVICES="$WORK/pam.d"
  mkdir -p "$SERVICES" && mkdir -m 700 "$WORK/store"
  nss_setup || { echo "nss_setup failed"; exit 1; }
  local multiarch
  multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null)
  PAM_SET_ITEMS="/usr/lib/${multiarch:-$(uname -m)-linux-gnu}/pam_wrapper/pam_set_items.so"
}

# suite_setup: what most pamtester suites start with: pam_setup, a fresh mpin-server
# (start_server), $WORK/mpin.conf naming it (write_config), and the service `mpin` (auth with the
# module and that file, account pam_permit). Exits the suite when the server does not start.
suite_setup() {
  pam_setup
  start_server || exit 1
  write_config "$WORK/mpin.conf" "$BACKEND"
  service mpin "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"
}

# nss_setup: the suites' Unix users without a change to /etc. The helper resolves PAM_USER with
# getpwnam (docs/SECURITY.md §6.4), so alice, carol, dora, erin and the names in $NSS_USERS (if
# set) must exist: Tests/Integration/nss-shim.c, preloaded, answers them from $OTHERS/passwd.
# pam_mpin.so gives its helper an environment of its own, so the helper is run through a
# wrapper script that sets it up: $HELPER (in a directory of root's that only root can write,
# as the module requires), and $HELPER_NOCASE, the same with names compared without regard to
# case (as sssd's case_sensitive = false). mpinctl (ctl) gets the shim too. Sets NSS_SO.
nss_setup() {
  local tcc uid=30001 name
  tcc=$(command -v clang || command -v cc)
  NSS_DIR=$(mktemp -d "$ROOT/.build/test-nss.XXXXXX") && chmod 755 "$NSS_DIR" || return 1
  NSS_SO="$NSS_DIR/nss-shim.so"
  "$tcc" -shared -fPIC -O2 -o "$NSS_SO" "$ROOT/Tests/Integration/nss-shim.c" -ldl 2>"$WORK/nss-cc.err" || { cat "$WORK/nss-cc.err"; return 1; }
  # Beside what other users run (0644 in $OTHERS): a helper run by a caller that is not root
  # reads it too.
  export MPIN_TEST_PASSWD="$OTHERS/passwd"
  : > "$MPIN_TEST_PASSWD" && chmod 644 "$MPIN_TEST_PASSWD"
  for name in alice carol dora erin ${NSS_USERS:-}; do
    printf '%s:x:%d:%d::/nonexistent:/usr/sbin/nologin\n' "$name" "$uid" "$uid" >> "$MPIN_TEST_PASSWD"
    uid=$((uid + 1))
  done
  HELPER="$NSS_DIR/mpin-pam-helper"
  HELPER_NOCASE="$NSS_DIR/mpin-pam-helper-nocase"
  nss_wrap "$BIN/mpin-pam-helper" "$HELPER"
  nss_wrap "$BIN/mpin-pam-helper" "$HELPER_NOCASE" MPIN_TEST_NSS_NOCASE=1
  MODULE="$PAM_SO helper=$HELPER"
}

# nss_wrap PROGRAM WRAPPER [VARIABLE=VALUE...]: writes WRAPPER (0755), a script that runs
# PROGRAM under the test name service of nss_setup, with the variables given.
nss_wrap() {
  local program=$1 wrapper=$2; shift 2
  printf '#!/bin/sh\nexec /usr/bin/env LD_PRELOAD=%s MPIN_TEST_PASSWD=%s %s %s\n' \
    "$NSS_SO" "$MPIN_TEST_PASSWD" "$*" "$program" > "$wrapper" && chmod 755 "$wrapper"
}

# service NAME LINES...: the PAM service NAME, one line per argument.
service() { local name=$1; shift; printf '%s\n' "$@" > "$SERVICES/$name"; }

# pam_env COMMAND...: COMMAND (pamtester, or one of the suites' PAM applications) under
# libpam-wrapper: the services of $SERVICES (PAM_SERVICES=DIR: another directory), syslog lines
# on stderr (PAM_DEBUGLEVEL, 2 unless set), and PAM_PRELOAD's libraries preloaded too (the test
# name service, for a module that resolves the user itself). For the foreground, or a subshell
# of its own: run in the background, $! would be the subshell's, not COMMAND's.
pam_env() {
  env LD_PRELOAD="libpam_wrapper.so${PAM_PRELOAD:+ $PAM_PRELOAD}" PAM_WRAPPER=1 \
    PAM_WRAPPER_SERVICE_DIR="${PAM_SERVICES:-$SERVICES}" PAM_WRAPPER_DEBUGLEVEL="${PAM_DEBUGLEVEL:-2}" "$@"
}

# hold_lock FILE: a background process takes FILE's exclusive lock (flock(2), as flock(1) would;
# FILE a directory or a file, made if missing) and keeps it until killed; returns once the lock
# is held (at most 30 s), that process's id in LOCK_PID. The process holding the lock is the one
# killed: flock(1) would hand the locked descriptor to a child that outlives it.
hold_lock() {
  local held="$WORK/held.$RANDOM" deadline=$((SECONDS + 30))
  [ -d "$1" ] || : >>"$1"
  ( exec 9<"$1"; flock --exclusive 9 && : >"$held" && exec sleep 300 ) &
  LOCK_PID=$!
  until [ -e "$held" ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "# flock on $1 not held within 30 s" >&2; return 1; }
    sleep 0.02
  done
  rm -f "$held"
}

# pam_wrapper_ready FILE COUNT: waits (at most 10 s) until COUNT processes whose output (pam_env's
# debug level 2) goes to FILE have each made their copy of the services: `timeout` and the
# pamtester it starts, when both have libpam_wrapper preloaded, are 2. Logins started at once are
# started one after another this way: libpam_wrapper looks for a free /tmp/pam.X and then makes
# it, and two processes in the same instant can pick the same letter and share (then lose) one
# copy.
pam_wrapper_ready() {
  local deadline=$((SECONDS + 10))
  while [ "$(grep -c "Successfully initialized pam_wrapper" "$1" 2>/dev/null)" -lt "$2" ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "# $1: $2 processes did not start libpam_wrapper within 10 s" >&2; return 1; }
    sleep 0.02
  done
}

# pamt SERVICE USER [ANSWER...]: pamtester SERVICE USER, the call PAMT_CALL (authenticate unless
# set: acct_mgmt, chauthtok, ...), in pam_env, for at most PAMT_TIMEOUT seconds (30); output in
# $OUT, status in $RC (pamtester's; 124 when it ran out of time), the output on stderr too with
# VERBOSE set, and appended to the file $PAMT_LOG when that is set.
# One answer is piped, for the first prompt. Several are typed on a pseudo-terminal, each when
# its prompt shows: pamtester's conversation (misc_conv) takes whatever one read() of its input
# returns as one answer, and flushes input typed ahead when it turns echo off.
pamt() {
  local service=$1 user=$2; shift 2
  if [ $# -le 1 ]; then
    OUT=$(printf '%s\n' "${1-}" | pam_env timeout "${PAMT_TIMEOUT:-30}" pamtester "$service" "$user" "${PAMT_CALL:-authenticate}" 2>&1)
    RC=$?
  else
    OUT=$(pam_env python3 - "$service" "$user" "${PAMT_CALL:-authenticate}" "${PAMT_TIMEOUT:-30}" "$@" <<'PY' 2>&1
import os, pexpect, sys
service, user, call, timeout, answers = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
p = pexpect.spawn("pamtester", [service, user, call], env=dict(os.environ), timeout=timeout, encoding="utf-8")
p.logfile_read = sys.stdout
try:
    for a in answers:
        # A prompt: "...PIN: ", "...code: ", or one with a note in parentheses ("M-Pin PIN (2 attempts left): ").
        if p.expect([r"(code|PIN|\)): $", pexpect.EOF]) == 1:
            break
        p.sendline(a)
    p.expect(pexpect.EOF)
except pexpect.TIMEOUT:
    sys.exit(124)
p.close()
sys.exit(p.exitstatus if p.exitstatus is not None else 125)
PY
)
    RC=$?
  fi
  [ -z "${VERBOSE:-}" ] || echo "$OUT" >&2
  [ -z "${PAMT_LOG:-}" ] || printf '%s\n' "$OUT" >> "$PAMT_LOG"
  return 0
}

# login_ms: the duration_ms of the last outcome line in $OUT (the helper's own time for the
# login, without the start of pamtester and libpam_wrapper, which a loaded machine stretches);
# 999999 when there is none. Upper bounds on a login's time read this; lower bounds (a wait that
# must have happened) read the wall clock.
login_ms() {
  local ms
  ms=$(sed -n 's/.*outcome=[A-Z_]* duration_ms=\([0-9]*\).*/\1/p' <<<"$OUT" | tail -1)
  echo "${ms:-999999}"
}

# ctl ARGS...: mpinctl with the suite's configuration.
ctl() { LD_PRELOAD="${NSS_SO:-}" "$BIN/mpinctl" --config "$WORK/mpin.conf" "$@"; }

# helper_run USER PIN ARGS...: the helper run by helper-harness.py (the module's side of the
# protocol) with LD_DEBUG=files, which lists every library it loads (pam_mpin.so would give
# the helper an environment of its own); output in $OUT, status in $RC.
helper_run() {
  local user=$1 pin=$2; shift 2
  OUT=$(LD_DEBUG=files timeout 60 python3 "$ROOT/Tests/Integration/helper-harness.py" "$HELPER" \
        authenticate "$user" "$pin" "$@" 2>&1)
  RC=$?
}

# build_thread_check: compiles pam-thread-check.c, a PAM application of our own that counts its
# threads around pam_authenticate and pam_end (pamtester cannot), to $WORK/pam-thread-check with
# the toolchain's C compiler.
build_thread_check() {
  local tcc
  tcc=$(command -v clang || command -v cc)
  "$tcc" -pthread -o "$WORK/pam-thread-check" "$ROOT/Tests/Integration/pam-thread-check.c" -lpam 2>"$WORK/tcc.err"
}

# threads_of SERVICE USER PIN: the thread-check harness's output line (rc=N threads=A,B,C).
threads_of() {
  PAM_DEBUGLEVEL=0 pam_env timeout 30 "$WORK/pam-thread-check" "$@" 2>/dev/null
}

# start_sshd PORT PAM_DIR NAME: a real sshd on 127.0.0.1:PORT, keyboard-interactive through PAM
# only (with SSHD_AUTH_METHODS set: those AuthenticationMethods, public keys allowed), whose PAM
# files libpam_wrapper reads from PAM_DIR; its log is $WORK/NAME.log. Sets
# SSHD_PID (also added to PIDS) and returns once sshd accepts connections.
start_sshd() {
  local port=$1 pamdir=$2 name=$3
  mkdir -p /run/sshd
  [ -e "$WORK/hostkey" ] || ssh-keygen -q -t ed25519 -N '' -f "$WORK/hostkey"
  cat > "$WORK/$name.config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $WORK/hostkey
PidFile $WORK/$name.pid
UsePAM yes
KbdInteractiveAuthentication yes
PasswordAuthentication no
PubkeyAuthentication $([ "${SSHD_AUTH_METHODS:-}" ] && echo yes || echo no)
AuthenticationMethods ${SSHD_AUTH_METHODS:-keyboard-interactive}
StrictModes no
CONF
  # (Not pam_env: a function in the background is a subshell, and $! must be sshd itself.)
  LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$pamdir" \
    /usr/sbin/sshd -D -e -f "$WORK/$name.config" > "$WORK/$name.log" 2>&1 &
  SSHD_PID=$!
  PIDS+=("$SSHD_PID")
  wait_port "$port" || { echo "sshd $name did not start:"; cat "$WORK/$name.log"; }
}

# in_background OUT COMMAND...: COMMAND in the background, its stdout and stderr in OUT (emptied
# first), killed at exit if still running; sets BG_PID. Its stdin is /dev/null (bash gives a
# background job of a script without job control nothing else), or the file BG_STDIN names,
# opened by the background process itself (a FIFO's writer may come later).
in_background() {
  local out=$1; shift
  : > "$out"
  if [ -n "${BG_STDIN:-}" ]; then "$@" <"$BG_STDIN" >"$out" 2>&1 &
  else "$@" >"$out" 2>&1 &
  fi
  BG_PID=$!
  PIDS+=("$BG_PID")
}

# first_match SED_SCRIPT FILE: waits (at most 30 s by the clock) until `sed -n SED_SCRIPT FILE` prints
# something, as a program writing FILE in the background shows an access number; prints its
# first line. Fails when nothing came.
first_match() {
  local found deadline=$((SECONDS + 30))
  while [ "$SECONDS" -lt "$deadline" ]; do
    found=$(sed -n "$1" "$2" | head -1)
    [ -n "$found" ] && { echo "$found"; return 0; }
    sleep 0.1
  done
  return 1
}

# host_test_user PREFIX: for the suites that change the real host (sshd, su, sudo): sets TESTUSER
# to PREFIX and this shell's pid, a name for the throwaway Unix user the suite then creates, and
# arranges that at exit the host is put back (restore_host). save_sudo_pam keeps sudo's PAM file.
host_test_user() {
  TESTUSER="$1$$"
  SUDO_PAM_BACKUP="$WORK/sudo.pam"
  trap restore_host EXIT
}

# save_sudo_pam: copies /etc/pam.d/sudo aside (or notes that there is none) before a suite
# replaces it, and its hash in ORIGINAL_SUDO_PAM; restore_host puts it back.
save_sudo_pam() {
  if [ -e /etc/pam.d/sudo ]; then
    cp -p /etc/pam.d/sudo "$SUDO_PAM_BACKUP"
    ORIGINAL_SUDO_PAM=$(sha256sum < /etc/pam.d/sudo)
  else
    : > "$WORK/sudo.pam.absent"
  fi
}

# restore_sudo_pam: /etc/pam.d/sudo as save_sudo_pam found it (a suite checks it before exit).
restore_sudo_pam() {
  if [ -e "$SUDO_PAM_BACKUP" ]; then cp -p "$SUDO_PAM_BACKUP" /etc/pam.d/sudo
  elif [ -e "$WORK/sudo.pam.absent" ]; then rm -f /etc/pam.d/sudo; fi
}

# restore_host: sudo's PAM file as it was, no sudoers file for TESTUSER, sshd stopped before the
# user (and its home) is removed, the suite's directory in /run (REACH) removed; then cleanup.
restore_host() {
  restore_sudo_pam
  rm -f "/etc/sudoers.d/$TESTUSER"
  [ -n "${SSHD_PID:-}" ] && kill "$SSHD_PID" 2>/dev/null
  userdel -r "$TESTUSER" >/dev/null 2>&1
  [ -n "${REACH:-}" ] && rm -rf "$REACH"
  cleanup
}
