#!/usr/bin/env bash
# `make demo`: mpin-server on 127.0.0.1 with a SQLite database in a temporary directory,
# serving HTTPS itself with a self-signed certificate (`make demo PLAIN_HTTP=1`: plain HTTP,
# which the module speaks without libcurl), a demo user registered with mpinctl into a
# temporary store, and two logins through pam_mpin.so with pamtester (libpam-wrapper: nothing
# in /etc changes). Everything started here is stopped at the end.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$ROOT/.build/release"
WORK=$(mktemp -d /tmp/mpin-demo.XXXXXX); chmod 700 "$WORK"
# pam_mpin.so (make module) with the build tree's mpin-pam-helper, copied into the demo's own
# directory: the module runs a helper only from root's directories reached without a symbolic
# link (pam_mpin(8)), which a checkout may not be (.build/release is a link; a home may be
# another user's).
install -d -m 755 "$WORK/bin" && install -m 755 "$BIN/mpin-pam-helper" "$WORK/bin/mpin-pam-helper"
MODULE_LINE="$ROOT/.build/pam/pam_mpin.so helper=$WORK/bin/mpin-pam-helper"
# The Unix user who logs in: the one running the demo (the module resolves users with the
# system's name service, so it must exist; nothing about the account changes).
DEMO_USER=$(id -un)
SERVER_PID=""
trap '[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT

# fail STEP: the demo did not show what it is for; make demo exits non-zero, naming the step.
FAILED=""
fail() { FAILED="$FAILED\n  - $*"; printf '\033[1;31mFAILED: %s\033[0m\n' "$*"; }
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

if [ -n "${PLAIN_HTTP:-}" ]; then
  say "1. Start mpin-server (RPS, two D-TAs, authentication server; SQLite in $WORK/server; plain HTTP)"
  "$BIN/mpin-server" init --data "$WORK/server" --auto-activate
  # Plain http authenticates nobody: the host pins the key init printed (README, register).
  BACKEND="http://127.0.0.1:$PORT"; CACERT_LINE="verdict_key = $("$BIN/mpin-server" verdict-key --data "$WORK/server")"
else
  say "1. Start mpin-server (RPS, two D-TAs, authentication server; SQLite in $WORK/server; HTTPS)"
  "$BIN/mpin-server" init --data "$WORK/server" --auto-activate --self-signed 127.0.0.1
  BACKEND="https://127.0.0.1:$PORT"; CACERT_LINE="cacert = $WORK/server/tls.crt"
fi
"$BIN/mpin-server" serve --data "$WORK/server" --host 127.0.0.1 --port "$PORT" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do grep -q ready "$WORK/server.log" && break; sleep 0.1; done
cat "$WORK/server.log"
if ! grep -q ready "$WORK/server.log"; then
  printf '\033[1;31mFAILED: step 1: mpin-server did not start\033[0m\n'; exit 1
fi

say "2. Register the Unix user '$DEMO_USER' as demo@example.org with PIN 1234 (mpinctl, private store)"
mkdir -m 700 "$WORK/store"
printf 'backend = %s\nstore = %s/store\ntimeout = 5\n%s\n' "$BACKEND" "$WORK" "$CACERT_LINE" > "$WORK/mpin.conf"
cat "$WORK/mpin.conf"
echo 1234 | "$BIN/mpinctl" --config "$WORK/mpin.conf" register "$DEMO_USER" --identity demo@example.org --pin-stdin \
  || fail "step 2: mpinctl could not register $DEMO_USER"
"$BIN/mpinctl" --config "$WORK/mpin.conf" list

mkdir "$WORK/pam.d"
printf 'auth required %s config=%s\naccount required pam_permit.so\n' "$MODULE_LINE" "$WORK/mpin.conf" > "$WORK/pam.d/mpin-demo"
# login PIN: one pamtester login; its exit status is pamtester's (0: accepted).
login() {
  echo "\$ echo $1 | pamtester mpin-demo $DEMO_USER authenticate"
  echo "$1" | LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$WORK/pam.d" PAM_WRAPPER_DEBUGLEVEL=2 \
    pamtester mpin-demo "$DEMO_USER" authenticate >"$WORK/login.out" 2>&1
  local rc=$?
  sed 's/PWRAP_DEBUG[^]]*\] - SYSLOG([0-9]*): /\n  syslog: /' "$WORK/login.out" | grep -v '^PWRAP\|^$'
  return $rc
}

# DEMO_RIGHT_PIN exists only to show that a broken demo fails: `make demo
# DEMO_RIGHT_PIN=1235` must exit non-zero at step 3.
RIGHT_PIN=${DEMO_RIGHT_PIN:-1234}
say "3. Log in through pam_mpin.so with the right PIN"
if login "$RIGHT_PIN"; then echo "accepted, as it should be"; else fail "step 3: the right PIN was not accepted"; fi
say "4. Log in with a wrong PIN"
if login 9999; then fail "step 4: the wrong PIN was accepted"; else echo "refused, as it should be"; fi
say "Server log lines"
tail -n 8 "$WORK/server.log"

cat <<'TEXT'

What happened: mpinctl registered the identity with both D-TAs and kept only a token (the
client secret with the PIN folded out) in the root-owned store. At each login the module
asked for the PIN through the PAM conversation and handed it to its helper process
(mpin-pam-helper), which fetched time permits and proved knowledge of the PIN in two passes;
the PIN never left this machine, and the server cannot recover it.

To do it for real: `sudo make install`, set `backend` in /etc/mpin/mpin.conf, run
`sudo mpinctl register USER --identity ID`, then add pam_mpin.so to /etc/pam.d (see pam/ and
README.md). `sudo mpinctl doctor` checks the setup.
TEXT
[ -n "${PLAIN_HTTP:-}" ] || cat <<'TEXT'

Every request went over TLS to mpin-server, which serves it itself (swift-nio-ssl), checked
against the self-signed certificate that `init --self-signed` made and mpin.conf names as
`cacert`.
TEXT

if [ -n "$FAILED" ]; then
  printf '\n\033[1;31mThe demo FAILED:%b\033[0m\n' "$FAILED"
  exit 1
fi
printf '\n\033[1mThe demo passed: the right PIN was accepted and the wrong one refused.\033[0m\n'
