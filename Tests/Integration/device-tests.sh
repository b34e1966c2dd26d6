#!/usr/bin/env bash
# pam_mpin.so in `mode = device` through pamtester and libpam-wrapper, approved by the `mpin`
# command of a second process (PROTOCOL.md §5.7). The host's store holds no token, only the
# links of Unix users to identities. Needs the release builds of pam_mpin, mpinctl, mpin and
# mpin-server (make test-pam).
# README recipe covered here: "Device mode: approve from your own machine" (mpinctl link,
# mpin register, the access-number message, mpin approve, Enter at a remote login's prompt,
# the refusals); and "Security notes" (in device mode the host's store holds no token).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"

if [ "$(id -u)" != 0 ]; then echo "device tests need root"; echo "0 passed, 1 failed"; exit 1; fi
pam_setup

# The server, with a rate limit this many logins from one address stay under.
PORT=$(free_port)
"$BIN/mpin-server" init --data "$WORK/server" --auto-activate >/dev/null || exit 1
python3 - "$WORK/server/config.json" <<'PY' || exit 1
import json, sys
c = json.load(open(sys.argv[1])); c["accessNumberRequestsPerMinute"] = 1000; c["mobileWaitSeconds"] = 5
json.dump(c, open(sys.argv[1], "w"))
PY
restart_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND" "mode = device" "device_timeout = 20"

service device       "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"
service device-remote "auth required $PAM_SET_ITEMS" \
                      "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"
service device-short "auth required $MODULE config=$WORK/mpin.conf device_timeout=2" "account required pam_permit.so"

# mpin_as NAME ARGS...: the `mpin` of the device of NAME (its own HOME, no XDG_DATA_HOME), as root.
mpin_as() { local who=$1; shift; env -u XDG_DATA_HOME HOME="$WORK/home-$who" "$BIN/mpin" "$@"; }
mkdir -p "$WORK/home-bob" "$WORK/home-carol"

# alice's device is a throwaway Unix user without privileges, as `mpin` is meant to run: its own
# copy of mpin and its HOME (0700, its own) under $OTHERS, which it can reach. Removed at exit.
DEVICE_USER="mpind$$"
DEVICE_HOME="$OTHERS/home-alice"
restore() { userdel "$DEVICE_USER" >/dev/null 2>&1; cleanup; }
trap restore EXIT
useradd -M -d "$DEVICE_HOME" -s /usr/sbin/nologin "$DEVICE_USER" || { echo "useradd failed"; exit 1; }
mkdir -m 700 "$DEVICE_HOME" && chown "$DEVICE_USER:" "$DEVICE_HOME"
cp "$BIN/mpin" "$OTHERS/mpin" && chmod 755 "$OTHERS/mpin"
# mpin_alice ARGS...: alice's `mpin`, run as $DEVICE_USER with the default store (~/.local/share/mpin).
mpin_alice() { runuser -u "$DEVICE_USER" -- env -u XDG_DATA_HOME HOME="$DEVICE_HOME" "$OTHERS/mpin" "$@"; }

# pam_start SERVICE USER: pamtester in the background, its output (stdout line-buffered, so
# that the access number shows while it waits) in $WORK/pam.out; sets PAM_PID.
pam_start() {
  BG_STDIN="${PAM_STDIN:-/dev/null}" in_background "$WORK/pam.out" \
    env LD_PRELOAD="libpam_wrapper.so /usr/libexec/coreutils/libstdbuf.so" _STDBUF_O=L \
    PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$SERVICES" PAM_WRAPPER_DEBUGLEVEL=2 timeout 60 pamtester "$1" "$2" authenticate
  PAM_PID=$BG_PID
}
# access_number: waits (at most 10 s) for the module's message; prints the number.
access_number() { first_match 's/.*mpin approve \([0-9]\{7\}\).*/\1/p' "$WORK/pam.out"; }
pam_wait() { wait "$PAM_PID"; RC=$?; OUT=$(cat "$WORK/pam.out"); [ -n "${VERBOSE:-}" ] && echo "$OUT" >&2; }

# Registration on the devices, links on the host.
echo 1234 | mpin_alice register --backend "$BACKEND" --verdict-key "$VERDICT_KEY" --identity alice@example.org --pin-stdin >/dev/null
check "mpin registers alice's device without root" [ "$?" -eq 0 ]
STORE="$DEVICE_HOME/.local/share/mpin"
check_all "the user's store is ~/.local/share/mpin, 0700, files 0600" \
  '[ "$(stat -c %a "$STORE")" = 700 ] && [ -n "$(ls "$STORE")" ] && [ -z "$(find "$STORE" -type f ! -perm 600)" ]'
check_all "the user's store and every file in it belong to the user" \
  '[ -z "$(find "$STORE" ! -user "$DEVICE_USER")" ] && [ -z "$(find "$STORE" ! -group "$(id -gn "$DEVICE_USER")")" ]'
XDG="$WORK/xdg"
echo 5555 | env XDG_DATA_HOME="$XDG" HOME="$WORK/home-bob" "$BIN/mpin" register --backend "$BACKEND" --verdict-key "$VERDICT_KEY" --identity bob@example.org --pin-stdin >/dev/null
check "mpin uses \$XDG_DATA_HOME/mpin when set" [ -d "$XDG/mpin" ]
rm -rf "$XDG"
echo 5555 | mpin_as bob register --backend "$BACKEND" --verdict-key "$VERDICT_KEY" --identity bob@example.org --pin-stdin >/dev/null
echo 7777 | mpin_as carol register --backend "$BACKEND" --verdict-key "$VERDICT_KEY" --identity carol@example.org --pin-stdin >/dev/null
check_all "mpin list shows the device's identity" 'mpin_alice list | grep -q "^alice@example.org	$BACKEND	REGISTERED$"'

mkdir -p "$WORK/home-nobody"
NOREG=$(mpin_as nobody approve 4241703 --pin-stdin </dev/null 2>&1)
check "mpin approve without a registration says USER_UNKNOWN" grep -q "USER_UNKNOWN" <<<"$NOREG"
mpin_as nobody approve 4241703 --pin-stdin </dev/null >/dev/null 2>&1
check "mpin approve without a registration exits 1" [ "$?" -eq 1 ]

# The registration each link pins: its fingerprint, as the device shows it.
ALICE_FP=$(mpin_alice list --fingerprints | cut -f4)
CAROL_FP=$(mpin_as carol list --fingerprints | cut -f4)
check_all "mpin list --fingerprints shows a 64-hex fingerprint" '[[ "$ALICE_FP" =~ ^[0-9a-f]{64}$ ]]'
ctl link alice --identity alice@example.org >/dev/null 2>&1
check "mpinctl link without --registration is refused" [ "$?" -ne 0 ]
ctl link alice --identity alice@example.org --registration "$ALICE_FP" >/dev/null
check "mpinctl link maps alice without a token" [ "$?" -eq 0 ]
ctl link carol --identity carol@example.org --registration "$CAROL_FP" >/dev/null
check_all "mpinctl list shows the link" 'ctl list | grep -q "^alice	alice@example.org	$BACKEND	LINKED$"'
check_all "mpinctl show shows the link" 'ctl show alice | grep -q "^state: LINKED$"'
check_all "the host's store holds no token (only the host key)" '[ -z "$(ls "$WORK/store" | grep secure- | grep -vx secure-host-key)" ]'
check_all "mpinctl link made the host key, 0600" '[ "$(stat -c %a "$WORK/store/secure-host-key")" = 600 ]'

# Approved with the right PIN; the time from starting `mpin approve` to PAM_SUCCESS.
pam_start device alice
N=$(access_number); [ -n "${VERBOSE:-}" ] && cat "$WORK/pam.out" >&2
check "the module shows an access number" [ -n "$N" ]
check_all "the message names host, user and service" \
  'grep -q "Approve this login on your device: access number [0-9]\{3\}-[0-9]\{3\}-[0-9] (host $(hostname), user alice, service device)" "$WORK/pam.out"'
T0=$(millis)
SHOWN=$(echo 1234 | mpin_alice approve "$N" --pin-stdin 2>&1)
APPROVE_RC=$?
pam_wait
T1=$(millis)
check "mpin approve with the right PIN succeeds" [ "$APPROVE_RC" -eq 0 ]
check "the approved login succeeds" [ "$RC" -eq 0 ]
check "the syslog line says mode=device and OK" grep -q 'user=alice identity=alice@example.org mode=device outcome=OK' <<<"$OUT"
SENT=$(sed -n 's/.*access number [0-9-]* (\(.*\))$/\1/p' <<<"$OUT" | head -1)
check_all "mpin approve shows the description the module sent" \
  '[ -n "$SENT" ] && grep -qF "Login waiting for approval: $SENT" <<<"$SHOWN"'
check "the PIN is not logged" bash -c '! grep -qE "(^|[^0-9])1234([^0-9]|$)" <<<"$1"' _ "$OUT"
cp "$WORK/pam.out" "$WORK/pam.out.first"
echo "# approval to PAM_SUCCESS (mpin approve started -> pamtester done): $((T1 - T0)) ms"
AGAIN=$(echo 1234 | mpin_alice approve "$N" --pin-stdin 2>&1)
AGAIN_RC=$?
check_all "an access number cannot be approved twice" '[ "$AGAIN_RC" -eq 1 ] && grep -q INCORRECT_ACCESS_NUMBER <<<"$AGAIN"'

# A remote login (PAM_RHOST set, as sshd does) gets the message as a prompt, since sshd's
# keyboard-interactive shows informational text only with a prompt; Enter starts the wait.
mkfifo "$WORK/enter"
PAM_RHOST=10.1.2.3 PAM_TTY=ssh PAM_STDIN="$WORK/enter" pam_start device-remote alice
exec 7>"$WORK/enter"
N=$(access_number)
check_all "a remote login asks with a prompt naming the remote host" \
  'grep -q "Press Enter once approved:" "$WORK/pam.out" && grep -q "service device-remote, from 10.1.2.3)" "$WORK/pam.out"'
# The device's approval waits (mobileWaitSeconds) for the login to take it up, which it does
# once Enter is pressed.
echo 1234 | mpin_alice approve "$N" --pin-stdin >/dev/null 2>&1 &
APPROVE_PID=$!
sleep 1; echo >&7; exec 7>&-
wait "$APPROVE_PID"; APPROVE_RC=$?
pam_wait
check_all "a remote login approved, then Enter, succeeds" '[ "$APPROVE_RC" -eq 0 ] && [ "$RC" -eq 0 ]'

# A login with a terminal device (sudo, login) gets the message as information, even with PAM_RHOST.
PAM_RHOST=db1 PAM_TTY=/dev/pts/7 pam_start device-remote alice
N=$(access_number)
check "a login on a terminal is told, not asked" bash -c '! grep -q "Press Enter" "$1"' _ "$WORK/pam.out"
check_all "a login on a terminal also gets the QR code in half blocks" '[ "$(grep -c "^[█▀▄ ]\{25\}$" "$WORK/pam.out")" -eq 13 ]'
check "no QR code without a terminal" bash -c '! grep -q "█" "$1"' _ "$WORK/pam.out.first"
echo 1234 | mpin_alice approve "$N" --pin-stdin >/dev/null 2>&1
pam_wait
check "a login on a terminal approved from the device succeeds" [ "$RC" -eq 0 ]

# docs/SECURITY.md §5, "Starve a host's device logins": 330 unauthenticated login starts under 11
# made-up remote hosts spend the anonymous budget of this address (30 a minute and description, 300
# a minute); alice's next login, signed with the host key the server certified at her first approved
# login, still gets its number and succeeds (PROTOCOL.md §5.8).
check_all "an approved login left the host a certificate of its key" \
  'grep -qF "\"$BACKEND\"" "$WORK/store/state-host-certificates"'
set_limit() {
  python3 - "$WORK/server/config.json" "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["accessNumberRequestsPerMinute"] = int(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
PY
  stop_server; restart_server
}
set_limit 30
# The flood, the anonymous request and the uncertified second host all fall in the budget's
# minute: one process over one connection sends the 330 starts (330 curl processes can take
# most of a minute on a loaded machine, and then the window turns before the last check).
FLOOD=$(python3 - "$PORT" "$(hostname)" <<'PY' | sort | uniq -c | tr -s ' '
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
for i in range(330):
    body = json.dumps({"description": "host %s, user root, service sshd, from 203.0.113.%d" % (sys.argv[2], i % 11)})
    c.request("POST", "/rps/getAccessNumber", body, {"Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    print(r.status)
    if r.getheader("Connection", "").lower() == "close":
        c.close(); c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
PY
)
check_all "the flood spends the anonymous budget (300 numbers, then 429)" \
  'grep -qx " 300 200" <<<"$FLOOD" && grep -qx " 30 429" <<<"$FLOOD"'
ANON=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$BACKEND/rps/getAccessNumber")
check "an anonymous request after the flood is 429" [ "$ANON" = 429 ]

# A second host, linked now: before its first approved login its requests are anonymous, and the
# flood has spent that budget. The administrator certifies its key on the server (mpin-server host
# certify) and the host keeps the certificate only when its pinned verdict key signed it for its
# own key (mpinctl host-certificate): its first device login then gets its number.
write_config "$WORK/mpin2.conf" "$BACKEND" "mode = device" "device_timeout = 20"
sed -i "s|^store = .*|store = $WORK/store2|" "$WORK/mpin2.conf"
mkdir -m 700 "$WORK/store2"
ctl2() { LD_PRELOAD="${NSS_SO:-}" "$BIN/mpinctl" --config "$WORK/mpin2.conf" "$@"; }
service device2 "auth required $MODULE config=$WORK/mpin2.conf" "account required pam_permit.so"
ctl2 link alice --identity alice@example.org --registration "$ALICE_FP" >/dev/null
check "the second host links alice" [ "$?" -eq 0 ]
pam_start device2 alice
pam_wait
check_all "the second host, uncertified, gets no number after the flood" \
  '[ "$RC" -ne 0 ] && ! grep -q "mpin approve [0-9]\{7\}" <<<"$OUT"'

pam_start device alice
N=$(access_number)
check "a device login after the flood still gets an access number" [ -n "$N" ]
echo 1234 | mpin_alice approve "$N" --pin-stdin >/dev/null 2>&1
pam_wait
check "a device login after the flood succeeds" [ "$RC" -eq 0 ]

HOSTKEY2=$(ctl2 host-key)
check_all "mpinctl host-key prints the host's key" '[[ "$HOSTKEY2" =~ ^[0-9a-f]{130}$ ]]'
check "mpin-server host certify refuses what is not a host key" \
  bash -c '! "$1/mpin-server" host certify --data "$2" 0123abcd >/dev/null 2>&1' _ "$BIN" "$WORK/server"
check "mpin-server host certify refuses --days beyond 365" \
  bash -c '! "$1/mpin-server" host certify --data "$2" --days 366 "$3" >/dev/null 2>&1' _ "$BIN" "$WORK/server" "$HOSTKEY2"
CERT2=$("$BIN/mpin-server" host certify --data "$WORK/server" "$HOSTKEY2")
HOSTKEY1=$(ctl host-key)
CERT_OTHER=$("$BIN/mpin-server" host certify --data "$WORK/server" "$HOSTKEY1")
"$BIN/mpin-server" init --data "$WORK/server-other" >/dev/null
CERT_FOREIGN=$("$BIN/mpin-server" host certify --data "$WORK/server-other" "$HOSTKEY2")
CERT_LATER="$(( ${CERT2%%.*} + 86400 )).${CERT2#*.}"
for bad in "$CERT_OTHER:another host's key" "$CERT_FOREIGN:another server's key" "$CERT_LATER:its expiry moved" "garbage:no certificate"; do
  ctl2 host-certificate "${bad%%:*}" >/dev/null 2>&1; REFUSED=$?
  check_all "mpinctl host-certificate refuses a certificate of ${bad#*:}, keeping nothing" \
    '[ "$REFUSED" -ne 0 ] && [ ! -e "$WORK/store2/state-host-certificates" ]'
done
check_all "mpinctl host-certificate keeps the server's certificate of this host's key" \
  'ctl2 host-certificate "$CERT2" | grep -q "^CERTIFIED until .* for $BACKEND$" && grep -qF "\"$BACKEND\"" "$WORK/store2/state-host-certificates"'
pam_start device2 alice
N=$(access_number)
check "the certified second host gets a number before any approved login" [ -n "$N" ]
echo 1234 | mpin_alice approve "$N" --pin-stdin >/dev/null 2>&1
pam_wait
check "... and its device login succeeds" [ "$RC" -eq 0 ]
set_limit 1000

# Another identity approves alice's login.
pam_start device alice
N=$(access_number); [ -n "${VERBOSE:-}" ] && cat "$WORK/pam.out" >&2
echo 5555 | mpin_as bob approve "$N" --pin-stdin >/dev/null 2>&1
pam_wait
check_all "an approval by another identity is PAM_AUTH_ERR" '[ "$RC" -ne 0 ] && grep -q "Authentication failure" <<<"$OUT"'
check "the syslog line names the other identity" grep -q 'outcome=FAILED duration_ms=[0-9]* (approved by another identity: bob@example.org)' <<<"$OUT"

# docs/SECURITY.md §6.2: somebody else's registration of alice's identity (mallory registered
# alice@example.org on his own device; this server activates every registration) approves
# with his own PIN: the host linked alice's registration only, so the login is refused.
echo 6666 | mpin_as mallory register --backend "$BACKEND" --verdict-key "$VERDICT_KEY" --identity alice@example.org --pin-stdin >/dev/null
check "mallory registers alice's identity on his own device" [ "$?" -eq 0 ]
pam_start device alice
N=$(access_number); [ -n "${VERBOSE:-}" ] && cat "$WORK/pam.out" >&2
echo 6666 | mpin_as mallory approve "$N" --pin-stdin >/dev/null 2>&1
pam_wait
check_all "an approval by a registration the host did not link is PAM_AUTH_ERR" \
  '[ "$RC" -ne 0 ] && grep -q "Authentication failure" <<<"$OUT"'
check "the syslog line says the registration was not linked" grep -q "that this host did not link" <<<"$OUT"

# A wrong PIN is refused; the login then times out.
pam_start device-short alice
N=$(access_number); [ -n "${VERBOSE:-}" ] && cat "$WORK/pam.out" >&2
echo 9999 | mpin_alice approve "$N" --pin-stdin >/dev/null 2>&1
WRONG_RC=$?
pam_wait
check "mpin approve with a wrong PIN fails" [ "$WRONG_RC" -eq 1 ]
check_all "a wrong PIN leaves the login unapproved: PAM_AUTH_ERR" '[ "$RC" -ne 0 ] && grep -q "Authentication failure" <<<"$OUT"'

# No approval: PAM_AUTH_ERR once device_timeout (2 s) has passed, with its syslog line.
T0=$(millis)
pam_start device-short alice
access_number >/dev/null
pam_wait
T1=$(millis)
check_all "no approval is PAM_AUTH_ERR after device_timeout" \
  '[ "$RC" -ne 0 ] && grep -q "Authentication failure" <<<"$OUT" && [ $((T1 - T0)) -ge 2000 ] && [ $((T1 - T0)) -lt 8000 ]'
check "the syslog line says timeout" grep -q 'outcome=FAILED duration_ms=[0-9]* (timeout: no approval within 2 s)' <<<"$OUT"

# Three wrong approvals block the identity.
pam_start device carol
N=$(access_number); [ -n "${VERBOSE:-}" ] && cat "$WORK/pam.out" >&2
for pin in 1 2 3; do echo "000$pin" | mpin_as carol approve "$N" --pin-stdin >"$WORK/approve.out" 2>&1; done
check "the third wrong approval blocks" grep -q BLOCKED "$WORK/approve.out"
check_all "the device shows the identity BLOCKED" 'mpin_as carol list | grep -q "BLOCKED$"'
kill "$PAM_PID" 2>/dev/null; wait "$PAM_PID" 2>/dev/null

# An unlinked user.
pam_start device nobody-here
pam_wait
check "an unknown user is refused" [ "$RC" -ne 0 ]

# No thread left behind while polling (the no-approval path polls several times).
build_thread_check
check_all "mode=device starts no thread (1 before, after and at the end)" '[ "$(threads_of device-short alice x)" = "rc=7 threads=1,1,1" ]'

# mode = auto (pam_mpin(8), OPTIONS), the default (no mode line): alice, linked, is asked on her
# device; dora, with a token here, types her PIN and waits for no approval.
write_config "$WORK/auto.conf" "$BACKEND" "device_timeout = 2"
service device-auto "auth required $MODULE config=$WORK/auto.conf" "account required pam_permit.so"
echo 1234 | ctl register dora --identity dora@example.org --pin-stdin >/dev/null
check "dora registers a token in the same store" [ "$?" -eq 0 ]
T0=$(millis)
AUTO_OUT=$(echo 1234 | pam_env \
  timeout 30 pamtester device-auto dora authenticate 2>&1)
RC=$?; T1=$(millis); OUT=$AUTO_OUT
check_all "mode = auto: dora (a token here) logs in with her PIN at once ($((T1 - T0)) ms, the helper's $(login_ms) ms), not after device_timeout (2 s)" \
  '[ "$RC" -eq 0 ] && grep -q "M-Pin PIN" <<<"$AUTO_OUT" && ! grep -q "access number" <<<"$AUTO_OUT" && [ "$(login_ms)" -lt 2000 ]'
pam_start device-auto alice
N=$(access_number)
pam_wait
check "mode = auto: alice (linked) is shown an access number" [ -n "$N" ]
check "mode = auto: without an approval she is refused after device_timeout" [ "$RC" -ne 0 ]
ctl delete dora >/dev/null

# Delete on both sides.
check_all "mpinctl delete removes the link" 'ctl delete alice >/dev/null && ! ctl list | grep -q "^alice	"'
check_all "mpin delete removes the device's identity" 'mpin_as bob delete >/dev/null && [ -z "$(mpin_as bob list)" ]'

[ -n "${VERBOSE:-}" ] && tail -20 "$WORK/server.log"

# Backend down: PAM_AUTHINFO_UNAVAIL at once.
stop_server
T0=$(millis)
pam_start device carol
pam_wait
T1=$(millis)
check_all "an unreachable backend is PAM_AUTHINFO_UNAVAIL within the budget" \
  '[ "$RC" -ne 0 ] && grep -q "Authentication service cannot retrieve authentication info" <<<"$OUT" && [ $((T1 - T0)) -lt 6000 ]'
[ -n "${VERBOSE:-}" ] && echo "$OUT / $((T1 - T0)) ms" >&2

# mpin(1), OPTIONS: mpin trusts what it is told to. Against a backend with a CA of its own
# (init --self-signed), mpin without --cacert fails with an error that names the option; with
# --cacert it registers (https: the key the backend announces is pinned).
start_tls_server || fail "mpin-server with its own TLS did not start"
TLS_OUT=$(echo 2468 | env -u XDG_DATA_HOME HOME="$WORK/home-tls" "$BIN/mpin" register --backend "https://127.0.0.1:$TLSPORT" \
  --identity tls@example.org --pin-stdin 2>&1)
RC=$?
check_all "mpin register against a backend with its own CA, without --cacert: refused (exit 6)" '[ "$RC" -eq 6 ]'
check "... and the error names the fix (--cacert)" grep -q -- "give --cacert FILE" <<<"$TLS_OUT"
echo 2468 | env -u XDG_DATA_HOME HOME="$WORK/home-tls" "$BIN/mpin" register --backend "https://127.0.0.1:$TLSPORT" \
  --identity tls@example.org --cacert "$CACERT" --pin-stdin >/dev/null 2>&1
check "mpin register --cacert: registered" [ "$?" -eq 0 ]
check_all "mpin list shows it" 'env -u XDG_DATA_HOME HOME="$WORK/home-tls" "$BIN/mpin" list | grep -q "^tls@example.org"'
summary
