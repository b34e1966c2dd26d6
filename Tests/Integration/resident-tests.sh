#!/usr/bin/env bash
# The resident helper (docs/DESIGN.md §2): `mpin-pam-helper --serve`, bound by itself (--listen) or
# handed its socket by systemd's protocol (systemd-socket-activate), and pam_mpin.so connecting
# to it first (helper_socket=PATH). Logins through it (right and wrong PIN, nouserok, several
# at once); and the attacker's side: a listener of another user at the module's socket path
# that answers "success" is refused and never sent a START, a user who is not root reaching the
# resident helper's socket gets nothing, a stopped helper makes the module run the helper file,
# and a child that stalls costs the login its budget, never a hang or a zombie. Needs root and
# the release builds (make test-pam); pamtester + libpam-wrapper; sockets in root's temporary
# directories, servers on 127.0.0.1; everything stops at the end.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(id -u)" != 0 ]; then echo "resident tests need root"; echo "0 passed, 1 failed"; exit 1; fi
NSS_USERS="u1 u2 u3 u4 u5 u6 u7 u8"
. "$ROOT/Tests/Integration/lib.sh"

pam_setup
start_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND"

# The resident helper's socket, in a directory of root's that others may pass through (as
# systemd's /run/mpin, DirectoryMode=0755).
SOCKDIR=$(mktemp -d /tmp/mpin-resident.XXXXXX) && chmod 755 "$SOCKDIR"
SOCK="$SOCKDIR/pam-helper.sock"
# (A process stopped by the stall test below is continued first, so that cleanup can stop it.)
trap 'kill -CONT "$SERVER_PID" ${CHILD:-} 2>/dev/null; rm -rf "$SOCKDIR"; cleanup' EXIT
# A helper file that does not exist: a login on a line naming it succeeds only through the
# resident helper (the module refuses to run a missing file).
MISSING="$TRUSTED/no-such-helper"

# start_resident: the build's helper, resident on $SOCK, under the suites' name service; sets
# RESIDENT_PID.
start_resident() {
  env LD_PRELOAD="$NSS_SO" MPIN_TEST_PASSWD="$MPIN_TEST_PASSWD" "$BIN/mpin-pam-helper" --serve --listen "$SOCK" \
    >"$WORK/resident.log" 2>&1 &
  RESIDENT_PID=$!
  PIDS+=("$RESIDENT_PID")
  for _ in $(seq 1 50); do [ -S "$SOCK" ] && return 0; sleep 0.1; done
  echo "the resident helper did not listen:"; cat "$WORK/resident.log"; return 1
}
stop_resident() { kill "$RESIDENT_PID" 2>/dev/null; wait "$RESIDENT_PID" 2>/dev/null; }
# The resident helper keeps POOL children forked and waiting (ResidentServer.idleChildren).
POOL=2
children() { ps --ppid "$RESIDENT_PID" -o pid= 2>/dev/null | tr -d ' ' | sort; }
# busy_children: the children serving a call (fd 0 is the accepted connection; an idle child's
# is the daemon's /dev/null).
busy_children() { local p; for p in $(children); do readlink "/proc/$p/fd/0" 2>/dev/null | grep -q '^socket:' && echo "$p"; done; }
# pool_settled: waits (up to 20 s by the clock) until the children are POOL idle ones and no zombie; 0 if so.
pool_settled() {
  local deadline=$((SECONDS + 20))
  while [ "$SECONDS" -lt "$deadline" ]; do
    [ "$(children | wc -l)" -eq "$POOL" ] && [ -z "$(busy_children)" ] \
      && ! ps --ppid "$RESIDENT_PID" -o stat= | grep -q Z && return 0
    sleep 0.1
  done
  return 1
}


service resident "auth required $PAM_SO helper=$MISSING helper_socket=$SOCK config=$WORK/mpin.conf" "account required pam_permit.so"
service resident-nouser "auth [success=done ignore=ignore default=die] $PAM_SO helper=$MISSING helper_socket=$SOCK config=$WORK/mpin.conf store=$WORK/store nouserok" \
                        "auth required pam_permit.so" "account required pam_permit.so"
service fallback "auth required $PAM_SO helper=$HELPER helper_socket=$SOCK config=$WORK/mpin.conf" "account required pam_permit.so"

echo 1234 | ctl register alice --identity alice@example.org --pin-stdin >/dev/null
check "alice is registered" [ "$?" -eq 0 ]

# --- the resident helper ---------------------------------------------------------------------
USAGE=$("$BIN/mpin-pam-helper" --serve 2>&1); USAGE_RC=$?
check_all "--serve without a socket from systemd or --listen is a usage error (exit 2, says why)" \
  '[ "$USAGE_RC" -eq 2 ] && grep -q "no listening socket" <<<"$USAGE"'
# pam_mpin.so's SO_PEERCRED check sees who listened (systemd, for the packaged socket), so the
# resident helper itself must refuse to serve as anyone but root (a drop-in's User=). Run from a
# copy nobody may execute (the build tree may be closed to others).
NOBODY_DIR=$(mktemp -d /tmp/mpin-resident-nobody.XXXXXX) && chmod 755 "$NOBODY_DIR"
install -m 755 "$BIN/mpin-pam-helper" "$NOBODY_DIR/helper" && mkdir -m 777 "$NOBODY_DIR/run"
NOBODY_OUT=$(timeout 30 setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$NOBODY_DIR/helper" --serve --listen "$NOBODY_DIR/run/s.sock" 2>&1); NOBODY_RC=$?
check_all "--serve as a user who is not root refuses to start (exit 1, says why) and binds nothing" \
  '[ "$NOBODY_RC" -eq 1 ] && grep -q "runs as root only" <<<"$NOBODY_OUT" && [ ! -e "$NOBODY_DIR/run/s.sock" ]'
rm -rf "$NOBODY_DIR"
start_resident || exit 1
check "the socket it binds is root's, mode 600" [ "$(stat -c '%a %U' "$SOCK")" = "600 root" ]
check_all "it is hardened before any connection: no core file (RLIMIT_CORE 0)" \
  'grep -Eq "^Max core file size +0 +0 " "/proc/$RESIDENT_PID/limits"'

pamt resident alice 1234
check_all "right PIN through the resident helper succeeds (the line's helper file does not exist)" \
  '[ "$RC" -eq 0 ] && grep -q "user=alice identity=alice@example.org outcome=OK" <<<"$OUT"'
check "the PIN is not logged" bash -c '! grep -qE "(^|[^0-9])1234([^0-9]|$)" <<<"$1"' _ "$OUT"
pamt resident alice 1235
check_all "wrong PIN through the resident helper fails, and says so" \
  '[ "$RC" -ne 0 ] && grep -q "Wrong PIN." <<<"$OUT" && grep -q "Authentication failure" <<<"$OUT"'
pamt resident-nouser carol ""
check_all "an unregistered user under nouserok is PAM_IGNORE through the resident helper" \
  '[ "$RC" -eq 0 ] && grep -q "nouserok: no registration" <<<"$OUT"'
service resident-account "auth required pam_permit.so" \
  "account required $PAM_SO helper=$MISSING helper_socket=$SOCK config=$WORK/mpin.conf" "account required pam_permit.so"
ACCOUNT_OUT=$(pam_env \
  timeout 30 pamtester resident-account alice acct_mgmt 2>&1); ACCOUNT_RC=$?
check_all "the account check (pam_sm_acct_mgmt) goes through the resident helper too" \
  '[ "$ACCOUNT_RC" -eq 0 ] && ! grep -q "no-such-helper" <<<"$ACCOUNT_OUT"'
check_all "after the logins its children are the $POOL idle ones again (the others reaped, no zombie)" pool_settled

# docs/DESIGN.md §2: a user the store's index proves unregistered, under nouserok, is answered by
# the module itself (pamtester gets the test name service: the module resolves the user as the
# helper does): no child of the resident helper takes the call. A registered user still goes
# to a child, which asks for the PIN.
pamn() { PAM_PRELOAD="$NSS_SO" pamt "$@"; }
pool_settled; BEFORE=$(children)
pamn resident-nouser carol ""
sleep 0.3; AFTER=$(children)
check_all "an unregistered user the index proves, under nouserok: PAM_IGNORE with the helper's log line, and no child took the call" \
  '[ "$RC" -eq 0 ] && grep -q "user=carol identity=- outcome=USER_UNKNOWN .*nouserok: no registration" <<<"$OUT" && [ "$BEFORE" = "$AFTER" ]'
pamn resident-nouser alice 1234
pool_settled; AFTER_ALICE=$(children)
check_all "... while registered alice on the same line is served by a child (asked for the PIN, logged in)" \
  '[ "$RC" -eq 0 ] && grep -q "M-Pin PIN[^:]*:" <<<"$OUT" && grep -q "user=alice identity=alice@example.org outcome=OK" <<<"$OUT" && [ "$AFTER" != "$AFTER_ALICE" ]'

# Pre-forked children: each serves one call and ends, and a replacement is forked for it.
BEFORE=$(children)
pamt resident alice 1234; FIRST_RC=$RC
pool_settled; AFTER_FIRST=$(children)
pamt resident alice 1234; SECOND_RC=$RC
pool_settled; AFTER_SECOND=$(children)
SERVED_FIRST=$(comm -23 <(echo "$BEFORE") <(echo "$AFTER_FIRST"))
SERVED_SECOND=$(comm -23 <(echo "$AFTER_FIRST") <(echo "$AFTER_SECOND"))
check_all "two logins in a row are each served by a different pre-forked child, which then ends" \
  '[ "$FIRST_RC" -eq 0 ] && [ "$SECOND_RC" -eq 0 ] && [ "$(echo "$BEFORE" | wc -l)" -eq "$POOL" ] \
   && [ "$(echo "$SERVED_FIRST" | grep -c .)" -eq 1 ] && [ "$(echo "$SERVED_SECOND" | grep -c .)" -eq 1 ] \
   && [ "$SERVED_FIRST" != "$SERVED_SECOND" ] && [ ! -e "/proc/$SERVED_FIRST" ] && [ ! -e "/proc/$SERVED_SECOND" ]'
check_all "after each login a fresh idle child replaces the one that served it" \
  '[ "$(comm -13 <(echo "$BEFORE") <(echo "$AFTER_FIRST") | grep -c .)" -eq 1 ] && [ "$(echo "$AFTER_SECOND" | wc -l)" -eq "$POOL" ]'

# Several at once: each user its own login, all through the resident helper.
for u in $NSS_USERS; do
  echo 2468 | ctl register "$u" --identity "$u@example.org" --pin-stdin >/dev/null || fail "register $u"
done
CONCURRENT=()
for u in $NSS_USERS; do
  ( echo 2468 | pam_env \
      timeout 60 pamtester resident "$u" authenticate >"$WORK/concurrent-$u.out" 2>&1; echo $? >"$WORK/concurrent-$u.rc" ) &
  CONCURRENT+=($!)
  pam_wrapper_ready "$WORK/concurrent-$u.out" 2
done
wait "${CONCURRENT[@]}"
check_all "8 logins at once through the resident helper all succeed (with $POOL children waiting)" \
  '[ "$(cat "$WORK"/concurrent-*.rc | sort -u)" = 0 ] && [ "$(ls "$WORK"/concurrent-*.rc | wc -l)" -eq 8 ]'
check "... and afterwards its children are the $POOL idle ones again" pool_settled

# --- https through a pre-forked child --------------------------------------------------------
# Idle children make an SSL_CTX (TLS 1.2+, verification on) only while recent logins used
# https: the first https login here, after http ones only, makes its own; the ones after it
# find one made before the call, into which the login loads its configuration's CAs. Trusted
# through cacert: logs in; the system's CAs instead (an untrusted certificate): refused as a
# TLS failure, as a spawned helper refuses it.
start_tls_server || fail "mpin-server with its own TLS did not start"
write_config "$WORK/tls.conf" "https://127.0.0.1:$TLSPORT" "cacert = $CACERT"
echo 2468 | LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/tls.conf" register erin --identity erin@example.org --pin-stdin >/dev/null
check "erin is registered on mpin-server's own https" [ "$?" -eq 0 ]
service resident-tls "auth required $PAM_SO helper=$MISSING helper_socket=$SOCK config=$WORK/tls.conf" "account required pam_permit.so"
service resident-tls-untrusted "auth required $PAM_SO helper=$MISSING helper_socket=$SOCK config=$WORK/tls.conf cacert=/etc/ssl/certs/ca-certificates.crt" \
  "account required pam_permit.so"
pamt resident-tls erin 2468
check_all "an https login through the resident helper's pre-forked child (no SSL_CTX made yet) verifies the configured CA and logs in" \
  '[ "$RC" -eq 0 ] && grep -q "user=erin identity=erin@example.org outcome=OK" <<<"$OUT"'
pamt resident-tls-untrusted erin 2468
check_all "... and an untrusted certificate is still refused there (TLS failure, PAM_AUTHINFO_UNAVAIL)" \
  '[ "$RC" -ne 0 ] && grep -q "Authentication service cannot retrieve authentication info" <<<"$OUT" && grep -q "outcome=UNAVAILABLE.*TLS.*certificate" <<<"$OUT"'
pamt resident-tls erin 2468
check_all "... and the next child, with its own SSL_CTX, logs in again with the configured CA" \
  '[ "$RC" -eq 0 ] && grep -q "outcome=OK" <<<"$OUT"'

# --- attacker: a user who is not root reaches the resident helper's socket --------------------
# The socket's mode keeps others out; with it opened up (a mistaken chmod), the peer check must.
# (As nobody, the system's python3: the root's one may be in a directory nobody cannot enter.)
chmod 666 "$SOCK"
ANSWER=$(setpriv --reuid=nobody --regid=nogroup --clear-groups -- /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
args = b"config=" + sys.argv[2].encode() + b"\0"
payload = b"a" + b"\0\0\0\0" + args
got = b""
try:
    s.sendall(b"S" + len(payload).to_bytes(4, "big") + payload)
    while True:
        chunk = s.recv(4096)
        if not chunk: break
        got += chunk
except (ConnectionResetError, BrokenPipeError):
    pass  # closed with the START unread
except Exception as e:
    print("error", type(e).__name__); sys.exit(1)
print("bytes", len(got))' "$SOCK" "$WORK/mpin.conf" 2>&1)
check_all "a user who is not root gets nothing for a START frame: the connection is closed unanswered" \
  '[ "$ANSWER" = "bytes 0" ]' 
chmod 600 "$SOCK"
pamt resident alice 1234
check_all "after the refusal the idle children still serve root: alice logs in, and the pool is whole" \
  '[ "$RC" -eq 0 ] && grep -q "outcome=OK" <<<"$OUT" && pool_settled'

# --- attacker: a listener of another user at the module's socket path --------------------------
# It answers any START with RESULT PAM_SUCCESS, and notes whether one came.
EVIL="$OTHERS/evil"
mkdir -m 700 "$EVIL" && chown nobody:nogroup "$EVIL"
setpriv --reuid=nobody --regid=nogroup --clear-groups -- /usr/bin/python3 -c '
import os, socket, sys
path, note = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX); s.bind(path); os.chmod(path, 0o777); s.listen(8)
open(note + ".ready", "w").close()
while True:
    c, _ = s.accept()
    header = c.recv(5)
    if header[:1] == b"S":
        open(note, "a").write("START\n")
        c.sendall(b"E\0\0\0\1\0")
    c.close()' "$EVIL/pam.sock" "$EVIL/got" >"$WORK/evil.log" 2>&1 &
EVIL_PID=$!
PIDS+=("$EVIL_PID")
for _ in $(seq 1 50); do [ -e "$EVIL/got.ready" ] && break; sleep 0.1; done
service impostor "auth required $PAM_SO helper=$HELPER helper_socket=$EVIL/pam.sock config=$WORK/mpin.conf" "account required pam_permit.so"
pamt impostor alice 1235
check_all "a listener that is not root is refused (logged as an impostor), and the wrong PIN still fails" \
  '[ "$RC" -ne 0 ] && grep -q "pam.sock: the listener is not root.s (uid $(id -u nobody)): an impostor" <<<"$OUT" && grep -q "Wrong PIN." <<<"$OUT"'
check "the impostor was never sent a START frame" [ ! -e "$EVIL/got" ]
pamt impostor alice 1234
check_all "with the impostor there, the right PIN logs in through the helper file" \
  '[ "$RC" -eq 0 ] && grep -q "user=alice identity=alice@example.org outcome=OK" <<<"$OUT" && [ ! -e "$EVIL/got" ]'
kill "$EVIL_PID" 2>/dev/null

# --- a root listener that closes before its first frame ----------------------------------------
# As the resident helper does over its 64 children at once: the module runs the helper file.
python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
while True:
    c, _ = s.accept(); c.close()' "$SOCKDIR/closing.sock" &
PIDS+=($!)
for _ in $(seq 1 50); do [ -S "$SOCKDIR/closing.sock" ] && break; sleep 0.1; done
service closing "auth required $PAM_SO helper=$HELPER helper_socket=$SOCKDIR/closing.sock config=$WORK/mpin.conf" "account required pam_permit.so"
pamt closing alice 1234
check_all "a root listener that closes unanswered: the helper file logs alice in, nothing logged about it" \
  '[ "$RC" -eq 0 ] && grep -q "user=alice identity=alice@example.org outcome=OK" <<<"$OUT" && ! grep -q "closing.sock" <<<"$OUT"'
pamt closing alice 1235
check_all "... and a wrong PIN there still fails" '[ "$RC" -ne 0 ] && grep -q "Wrong PIN." <<<"$OUT"'

# --- a slow typist ----------------------------------------------------------------------------
# The time the user takes to answer is not the child's: its own clock (timeout 3 + 3 s, plus its
# margin) stops at the PIN prompt and resumes with what was left, as the module's does. A PIN
# typed after 9 s must still log alice in through the resident helper.
SLOW_T0=$(millis)
OUT=$( (sleep 9; echo 1234) | pam_env timeout 40 pamtester resident alice authenticate 2>&1); RC=$?
SLOW_T1=$(millis); [ -n "${VERBOSE_SLOW:-}" ] && echo "$OUT" >&2
check_all "a PIN typed after 9 s (past the child's budget of ~7 s) still logs alice in through the resident helper" \
  '[ "$RC" -eq 0 ] && [ $((SLOW_T1 - SLOW_T0)) -ge 9000 ] && grep -q "user=alice identity=alice@example.org outcome=OK" <<<"$OUT"'

# --- a child that stalls ---------------------------------------------------------------------
# The backend stops answering (SIGSTOP to mpin-server) and so does the login's child: the module
# must give up within its budget (timeout 8 + 3 s), leave no child in the caller, and the
# resident helper must reap the child once it has ended.
{ echo "backend = $BACKEND"; echo "store = $WORK/store"; echo "timeout = 8"; } > "$WORK/stall.conf"
service stall "auth required $PAM_SO helper=$MISSING helper_socket=$SOCK config=$WORK/stall.conf" "account required pam_permit.so"
# Earlier logins' children have ended (the stalled one is the one busy child).
pool_settled
kill -STOP "$SERVER_PID"
T0=$(millis)
echo 1234 > "$WORK/stall.pin"
BG_STDIN="$WORK/stall.pin" in_background "$WORK/stall.out" env LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$SERVICES" \
  PAM_WRAPPER_DEBUGLEVEL=2 timeout 60 pamtester stall alice authenticate
STALL_PID=$BG_PID
CHILD=""
for _ in $(seq 1 100); do CHILD=$(busy_children | head -1); [ -n "$CHILD" ] && break; sleep 0.05; done
[ -n "$CHILD" ] && kill -STOP "$CHILD"
check_all "the caller has no child of its own while the resident helper's child works" \
  '[ -n "$CHILD" ] && [ -z "$(pgrep -P "$(pgrep -P "$STALL_PID" -x pamtester || echo 1)")" ]'
wait "$STALL_PID"; STALL_RC=$?
ELAPSED=$(( $(millis) - T0 ))
kill -CONT "$SERVER_PID"
check_all "the module gives up on a stalled child within its budget (PAM_SERVICE_ERR, logged)" \
  '[ "$STALL_RC" -ne 0 ] && [ "$ELAPSED" -lt 25000 ] && grep -q "pam-helper.sock stopped: it did not answer in time" "$WORK/stall.out"'
[ -n "$CHILD" ] && kill -CONT "$CHILD"
check_all "the stalled child ends and is reaped by the resident helper (no zombie)" \
  'for _ in $(seq 1 150); do [ ! -e "/proc/$CHILD" ] && break; sleep 0.1; done; [ ! -e "/proc/$CHILD" ] && pool_settled'

# --- systemd's socket activation -------------------------------------------------------------
# systemd-socket-activate passes the listening socket as systemd does (fd 3, LISTEN_FDS=1,
# LISTEN_PID the program's); the login goes through it.
# The pool refilled after the stalled child first (a loaded machine may take a moment), so that
# the children read are the idle ones stopping must end.
pool_settled
IDLE=$(children)
stop_resident
# none_alive PIDS: waits (up to 20 s by the clock) until none of PIDS is a process; 0 if so.
none_alive() {
  local p alive deadline=$((SECONDS + 20))
  while [ "$SECONDS" -lt "$deadline" ]; do
    alive=0; for p in $1; do [ -e "/proc/$p" ] && alive=1; done
    [ "$alive" = 0 ] && return 0
    sleep 0.1
  done
  return 1
}
check_all "stopping the resident helper leaves none of its $POOL idle children" \
  '[ "$(echo "$IDLE" | grep -c .)" -eq "$POOL" ] && none_alive "$IDLE"'
if command -v systemd-socket-activate >/dev/null; then
  rm -f "$SOCK"
  systemd-socket-activate -l "$SOCK" env LD_PRELOAD="$NSS_SO" MPIN_TEST_PASSWD="$MPIN_TEST_PASSWD" "$BIN/mpin-pam-helper" --serve \
    >"$WORK/activated.log" 2>&1 &
  ACTIVATED_PID=$!
  PIDS+=("$ACTIVATED_PID")
  for _ in $(seq 1 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
  pamt resident alice 1234
  check_all "a socket-activated resident helper (LISTEN_FDS) logs alice in" \
    '[ "$RC" -eq 0 ] && grep -q "user=alice identity=alice@example.org outcome=OK" <<<"$OUT"'
  kill "$ACTIVATED_PID" 2>/dev/null; wait "$ACTIVATED_PID" 2>/dev/null
else
  echo "# systemd-socket-activate is missing: socket activation not tested"
fi

# --- the resident helper stopped: the module runs the helper file -----------------------------
[ -S "$SOCK" ] || { python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$SOCK"; }
pamt fallback alice 1234
check_all "a socket nobody listens on (ECONNREFUSED): the helper file logs alice in, nothing logged about it" \
  '[ "$RC" -eq 0 ] && grep -q "outcome=OK" <<<"$OUT" && ! grep -q "pam-helper.sock" <<<"$OUT"'
rm -f "$SOCK"
pamt fallback alice 1235
check_all "no socket at all (ENOENT): the helper file decides, a wrong PIN fails" \
  '[ "$RC" -ne 0 ] && grep -q "Wrong PIN." <<<"$OUT" && ! grep -q "pam-helper.sock" <<<"$OUT"'

summary
