#!/usr/bin/env bash
# pam_mpin.so through pamtester and libpam-wrapper: a private PAM service directory, nothing in
# /etc changes. Needs the release builds of pam_mpin, mpinctl and mpin-server (make test-pam).
# README recipes covered here: "Register a user" (mpinctl register with --pin-stdin, the right
# and a wrong PIN, mpinctl delete), "Run mpin-server" (init --auto-activate and serve on
# 127.0.0.1, through lib.sh's start_server; init --self-signed with cacert on the clients; a
# SIGHUP reload; two serve nodes on one data directory), "Troubleshooting" (the syslog line and
# its outcomes, the refusal of an open store, the helper refusals) and "Security notes" (the
# PIN never logged, store, configuration and helper refused, control characters masked).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"

# frank and frankie: users of the test name service with no registration (issue 27 item 2).
NSS_USERS="${NSS_USERS:-} frank frankie"
pam_setup

start_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND"

service mpin       "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"
service mpin-nouser "auth [success=done ignore=ignore default=die] $MODULE config=$WORK/mpin.conf nouserok" \
                    "auth required pam_permit.so" "account required pam_permit.so"
service mpin-strict "auth [success=done ignore=ignore default=die] $MODULE config=$WORK/mpin.conf" \
                    "auth required pam_permit.so" "account required pam_permit.so"
service mpin-first "auth required $PAM_SET_ITEMS" \
                   "auth required $MODULE config=$WORK/mpin.conf use_first_pass" "account required pam_permit.so"
service mpin-badconf "auth required $MODULE config=$WORK/missing.conf" "account required pam_permit.so"

# pamt SERVICE USER PIN: runs pamtester, output in $OUT, status in $RC.
pamt() {
  OUT=$(printf '%s\n' "$3" | LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$SERVICES" \
        PAM_WRAPPER_DEBUGLEVEL=2 timeout "${PAMT_TIMEOUT:-30}" pamtester "$1" "$2" authenticate 2>&1)
  RC=$?
  [ -n "${VERBOSE:-}" ] && echo "$OUT" >&2
}

echo 1234 | ctl register alice --identity alice@example.org --pin-stdin >/dev/null
check "mpinctl registers alice" [ "$?" -eq 0 ]
echo 4321 | ctl register carol --identity carol@example.org --pin-stdin >/dev/null
check "mpinctl registers carol" [ "$?" -eq 0 ]

pamt mpin alice 1234
check "right PIN succeeds" [ "$RC" -eq 0 ]
check "the prompt is M-Pin PIN:" grep -q 'M-Pin PIN:' <<<"$OUT"
check "syslog line names user, identity and outcome" grep -q 'user=alice identity=alice@example.org outcome=OK' <<<"$OUT"
check "the PIN is not logged" bash -c '! grep -qE "(^|[^0-9])1234([^0-9]|$)" <<<"$1"' _ "$OUT"

pamt mpin alice 1235
check "wrong PIN fails" [ "$RC" -ne 0 ]
check "wrong PIN tells the user" grep -q 'Wrong PIN.' <<<"$OUT"
check "wrong PIN is PAM_AUTH_ERR" grep -q 'Authentication failure' <<<"$OUT"

pamt mpin alice 1234
check "right PIN again succeeds (counter reset)" [ "$RC" -eq 0 ]

# No backend configured anywhere: the login uses the one alice's registration records.
{ echo "store = $WORK/store"; echo "timeout = 3"; } > "$WORK/store-only.conf"
service mpin-store-only "auth required $MODULE config=$WORK/store-only.conf" "account required pam_permit.so"
pamt mpin-store-only alice 1234
check "a config with only store= logs in through the registration's backend" [ "$RC" -eq 0 ]

PAM_AUTHTOK=1234 pamt mpin-first alice ""
check "use_first_pass takes PAM_AUTHTOK" [ "$RC" -eq 0 ]
check "use_first_pass does not prompt" bash -c '! grep -q "M-Pin PIN" <<<"$1"' _ "$OUT"

# No thread left behind (the harness counts them around pam_authenticate and pam_end).
build_thread_check
check "the thread-check harness builds" [ -x "$WORK/pam-thread-check" ]
check "a login through plain HTTP starts no thread (1 before, after and at the end)" \
  [ "$(threads_of mpin alice 1234)" = "rc=0 threads=1,1,1" ]

# The transport: plain http to an IP address is the helper's own; a host name goes through
# libcurl. LD_DEBUG=files lists every library a process loads; pam_mpin.so gives its helper an
# environment of its own, so the helper is run here by helper-harness.py (the module's side
# of the protocol) with LD_DEBUG set.
helper_run() {
  local user=$1 pin=$2; shift 2
  OUT=$(LD_DEBUG=files timeout 60 python3 "$ROOT/Tests/Integration/helper-harness.py" "$HELPER" \
        authenticate "$user" "$pin" "$@" 2>&1)
  RC=$?
}
helper_run alice 1234 "config=$WORK/mpin.conf"
check_all "an IP-address backend logs in without loading libcurl" \
  '[ "$RC" -eq 0 ] && grep -qx "result 0" <<<"$OUT" && grep -q "file=libc.so.6" <<<"$OUT" && ! grep -q "file=libcurl" <<<"$OUT"'
echo 5678 | ctl register dora --identity dora@example.org --backend "http://localhost:$PORT" --pin-stdin >/dev/null
check "mpinctl registers dora on a host-name backend" [ "$?" -eq 0 ]
helper_run dora 5678 "config=$WORK/mpin.conf"
check_all "a host-name backend logs in through libcurl" '[ "$RC" -eq 0 ] && grep -qx "result 0" <<<"$OUT" && grep -q "file=libcurl.so.4" <<<"$OUT"'
pamt mpin dora 5679
check_all "a wrong PIN through libcurl is refused" '[ "$RC" -ne 0 ] && grep -q "Wrong PIN." <<<"$OUT"'
check "delete dora" [ "$(ctl delete dora >/dev/null 2>&1; echo $?)" -eq 0 ]

# TLS: a second mpin-server serving HTTPS itself with the self-signed certificate of
# `init --self-signed 127.0.0.1`; the module trusts it through `cacert`, and every TLS failure
# is PAM_AUTHINFO_UNAVAIL with the reason in syslog. An https backend at an IP address is
# spoken to with OpenSSL's libssl directly (PlainHTTPTransport), without libcurl.
start_tls_server || fail "mpin-server with its own TLS did not start"
write_config "$WORK/tls.conf" "https://127.0.0.1:$TLSPORT" "cacert = $CACERT"
service mpin-tls "auth required $MODULE config=$WORK/tls.conf" "account required pam_permit.so"
service mpin-tls-untrusted "auth required $MODULE config=$WORK/tls.conf cacert=/etc/ssl/certs/ca-certificates.crt" \
  "account required pam_permit.so"
check_all "init --self-signed writes the key 0600 and a certificate for IP 127.0.0.1" \
  '[ "$(stat -c %a "$TLSDATA/tls.key")" = 600 ] && openssl x509 -in "$CACERT" -noout -ext subjectAltName | grep -q "IP Address:127.0.0.1"'
echo 2468 | "$BIN/mpinctl" --config "$WORK/tls.conf" register erin --identity erin@example.org --pin-stdin >/dev/null
check "mpinctl registers erin on mpin-server's own https (cacert)" [ "$?" -eq 0 ]
helper_run erin 2468 "config=$WORK/tls.conf"
check_all "an https backend at an IP address logs in through libssl, without libcurl, with the configured CA" \
  '[ "$RC" -eq 0 ] && grep -qx "result 0" <<<"$OUT" && grep -q "file=libssl.so.3" <<<"$OUT" && ! grep -q "file=libcurl" <<<"$OUT" && grep -q "user=erin identity=erin@example.org outcome=OK" <<<"$OUT"'
check "a login over TLS starts no thread either" [ "$(threads_of mpin-tls erin 2468)" = "rc=0 threads=1,1,1" ]
pamt mpin-tls erin 2469
check_all "a wrong PIN over https is refused" '[ "$RC" -ne 0 ] && grep -q "Wrong PIN." <<<"$OUT"'
pamt mpin-tls-untrusted erin 2468
check_all "an untrusted certificate is PAM_AUTHINFO_UNAVAIL, logged as a TLS failure with the reason" \
  '[ "$RC" -ne 0 ] && grep -q "Authentication service cannot retrieve authentication info" <<<"$OUT" && grep -q "outcome=UNAVAILABLE.*TLS.*certificate" <<<"$OUT"'
# /health and /metrics over the same TLS: the logins above are counted, no identity appears.
https_get() { python3 -c 'import ssl, sys, urllib.request
print(urllib.request.urlopen(sys.argv[2], context=ssl.create_default_context(cafile=sys.argv[1]), timeout=10).read().decode())' "$CACERT" "https://127.0.0.1:$TLSPORT$1"; }
HEALTH=$(https_get /health); METRICS=$(https_get /metrics)
check_all "/health over TLS says the database and keys are fine" 'grep -q "\"status\":\"ok\"" <<<"$HEALTH"'
check_all "/metrics counts the TLS logins by outcome and names no identity" \
  'grep -Eq "^mpin_logins_total\{outcome=\"ok\"\} [1-9]" <<<"$METRICS" && grep -Eq "^mpin_logins_total\{outcome=\"wrong_pin\"\} [1-9]" <<<"$METRICS" && ! grep -q erin <<<"$METRICS"'
SERVED=$(served_fingerprint "$TLSPORT" -tls1_2)
check_all "TLS 1.2 and 1.3 are served" '[ -n "$SERVED" ] && [ "$SERVED" = "$(served_fingerprint "$TLSPORT" -tls1_3)" ]'
check "TLS 1.1 is refused" [ -z "$(served_fingerprint "$TLSPORT" -tls1_1)" ]

# Refusals at start: a key others can read, a certificate of another key. Non-zero exit, the
# file and the reason in the message.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$WORK/other.key" \
  -out "$WORK/other.crt" -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
cp "$TLSDATA/tls.key" "$WORK/open.key" && chmod 640 "$WORK/open.key"
START_OUT=$("$BIN/mpin-server" serve --data "$TLSDATA" --port "$(free_port)" --tls-cert "$CACERT" --tls-key "$WORK/open.key" 2>&1)
START_RC=$?
check_all "a key file readable by group is refused at start, naming the file" \
  '[ "$START_RC" -ne 0 ] && grep -q "$WORK/open.key.*group or others" <<<"$START_OUT"'
START_OUT=$("$BIN/mpin-server" serve --data "$TLSDATA" --port "$(free_port)" --tls-cert "$WORK/other.crt" --tls-key "$TLSDATA/tls.key" 2>&1)
START_RC=$?
check_all "a certificate that does not match the key is refused at start, naming the file" \
  '[ "$START_RC" -ne 0 ] && grep -q "$WORK/other.crt.*does not match" <<<"$START_OUT"'

# SIGHUP reloads certificate and key. The clients trust both the old and the new certificate,
# so logins go on through the swap; a connection opened before it keeps working after it.
reloads() { grep -c "TLS certificate reloaded" "$WORK/tls-server.log"; }
# hup_and_wait: SIGHUP, then wait until the server has logged one more reload or failure.
hup_and_wait() {
  local before; before=$(grep -c "TLS certificate reloaded\|TLS reload failed" "$WORK/tls-server.log")
  kill -HUP "$TLS_PID"
  for _ in $(seq 1 50); do
    [ "$(grep -c "TLS certificate reloaded\|TLS reload failed" "$WORK/tls-server.log")" -gt "$before" ] && return 0
    sleep 0.1
  done
  return 1
}
# init --self-signed on an initialised directory adds only the certificate (and never replaces one).
"$BIN/mpin-server" init --data "$WORK/next" >/dev/null
check_all "init --self-signed on an initialised directory adds the certificate and names it in config.json" \
  '"$BIN/mpin-server" init --data "$WORK/next" --self-signed 127.0.0.1 >/dev/null && [ -f "$WORK/next/tls.crt" ] && [ "$(stat -c %a "$WORK/next/tls.key")" = 600 ] && grep -q "\"tlsKey\" : \"tls.key\"" "$WORK/next/config.json"'
check "... and refuses to replace it" bash -c '! "$1" init --data "$2" --self-signed 127.0.0.1 >/dev/null 2>&1' _ "$BIN/mpin-server" "$WORK/next"
cat "$CACERT" "$WORK/next/tls.crt" > "$WORK/both.pem"
write_config "$WORK/tls-both.conf" "https://127.0.0.1:$TLSPORT" "cacert = $WORK/both.pem"
service mpin-tls-both "auth required $MODULE config=$WORK/tls-both.conf" "account required pam_permit.so"
OLD=$(cert_fingerprint "$CACERT"); NEW=$(cert_fingerprint "$WORK/next/tls.crt")
cp "$CACERT" "$WORK/old.crt"; cp "$TLSDATA/tls.key" "$WORK/old.key"
# The in-flight connection: one keep-alive TLS connection, a request, SIGHUP (sent by the
# script once its first answer is in), a second request on the same connection.
python3 - "$TLSPORT" "$WORK/both.pem" "$TLS_PID" "$TLSDATA" "$WORK/next" >"$WORK/inflight.out" 2>&1 <<'PY' &
import http.client, os, shutil, signal, ssl, sys, time
port, ca, pid, data, nxt = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
conn = http.client.HTTPSConnection("127.0.0.1", port, context=ssl.create_default_context(cafile=ca), timeout=10)
conn.request("GET", "/rps/clientSettings"); r = conn.getresponse(); r.read(); first = r.status
go = os.path.join(os.path.dirname(ca), "go")  # created by the login loop after its first logins
for _ in range(200):
    if os.path.exists(go): break
    time.sleep(0.05)
shutil.copyfile(nxt + "/tls.key", data + "/tls.key"); shutil.copyfile(nxt + "/tls.crt", data + "/tls.crt")
os.kill(pid, signal.SIGHUP)
time.sleep(1.5)
conn.request("GET", "/rps/clientSettings"); r = conn.getresponse(); r.read()
print("statuses", first, r.status)
PY
INFLIGHT=$!
# Logins before the swap, then (the script told to go) until 3 more have run after the
# server logged the reload.
logins=0 ok_logins=0 after=0
while [ "$after" -lt 3 ] && [ "$logins" -lt 60 ]; do
  pamt mpin-tls-both erin 2468; logins=$((logins + 1)); [ "$RC" -eq 0 ] && ok_logins=$((ok_logins + 1))
  [ "$logins" -eq 2 ] && touch "$WORK/go"
  [ "$(reloads)" -ge 1 ] && after=$((after + 1))
done
wait "$INFLIGHT"
check_all "logins keep succeeding through a reload ($ok_logins of $logins, 2 before, 3 after)" \
  '[ "$after" -eq 3 ] && [ "$ok_logins" -eq "$logins" ]'
check_all "a connection opened before the reload still answers after it" 'grep -q "statuses 200 200" "$WORK/inflight.out"'
check_all "after SIGHUP new connections get the new certificate" \
  '[ "$(reloads)" -ge 1 ] && [ "$(served_fingerprint "$TLSPORT")" = "$NEW" ] && [ "$NEW" != "$OLD" ]'
write_config "$WORK/tls-old.conf" "https://127.0.0.1:$TLSPORT" "cacert = $WORK/old.crt"
service mpin-tls-old "auth required $MODULE config=$WORK/tls-old.conf" "account required pam_permit.so"
pamt mpin-tls-old erin 2468
check_all "a client trusting only the old certificate is now refused" '[ "$RC" -ne 0 ] && grep -q "outcome=UNAVAILABLE.*TLS" <<<"$OUT"'
pamt mpin-tls-both erin 2468
check "... and one trusting the new one logs in" [ "$RC" -eq 0 ]
# A failed reload keeps the certificate in use and logs why.
cp "$WORK/old.crt" "$TLSDATA/tls.crt"
hup_and_wait
check_all "a reload with a certificate of another key fails, logged with the reason" \
  'grep "TLS reload failed" "$WORK/tls-server.log" | grep -q "does not match" && [ "$(served_fingerprint "$TLSPORT")" = "$NEW" ]'
cp "$WORK/next/tls.crt" "$TLSDATA/tls.crt"; chmod 644 "$TLSDATA/tls.key"
hup_and_wait
check_all "a reload with a key others can read fails, logged with the reason" \
  'grep "TLS reload failed" "$WORK/tls-server.log" | grep -q "group or others" && [ "$(served_fingerprint "$TLSPORT")" = "$NEW" ]'
chmod 600 "$TLSDATA/tls.key"
pamt mpin-tls-both erin 2468
check "logins still succeed after failed reloads" [ "$RC" -eq 0 ]

# An expired certificate and one for another host, each trusted through cacert, put in place
# by a reload: PAM_AUTHINFO_UNAVAIL with the reason in syslog.
make_signed() { # NAME SAN STARTDATE ENDDATE: a self-signed pair WORK/NAME.crt/.key with those dates
  local d="$WORK/ca-$1"; mkdir -p "$d"; : > "$d/index.txt"; echo 01 > "$d/serial"
  printf '[ca]\ndefault_ca = d\n[d]\ndatabase = %s/index.txt\nnew_certs_dir = %s\nserial = %s/serial\ndefault_md = sha256\npolicy = p\ncopy_extensions = copy\n[p]\ncommonName = supplied\n' \
    "$d" "$d" "$d" > "$d/ca.cnf"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$WORK/$1.key" -out "$d/req.csr" \
    -subj "/CN=$1" -addext "subjectAltName=$2" -addext basicConstraints=critical,CA:TRUE >/dev/null 2>&1 &&
  openssl ca -batch -config "$d/ca.cnf" -selfsign -keyfile "$WORK/$1.key" -in "$d/req.csr" -out "$WORK/$1.crt" -notext \
    -startdate "$3" -enddate "$4" >/dev/null 2>&1 && chmod 600 "$WORK/$1.key"
}
use_pair() { cp "$WORK/$1.crt" "$TLSDATA/tls.crt" && cp "$WORK/$1.key" "$TLSDATA/tls.key" && hup_and_wait; }
make_signed expired IP:127.0.0.1 20200101000000Z 20200201000000Z
make_signed wronghost DNS:wronghost.example 20240101000000Z 20400101000000Z
write_config "$WORK/tls-expired.conf" "https://127.0.0.1:$TLSPORT" "cacert = $WORK/expired.crt"
write_config "$WORK/tls-wronghost.conf" "https://127.0.0.1:$TLSPORT" "cacert = $WORK/wronghost.crt"
service mpin-tls-expired "auth required $MODULE config=$WORK/tls-expired.conf" "account required pam_permit.so"
service mpin-tls-wronghost "auth required $MODULE config=$WORK/tls-wronghost.conf" "account required pam_permit.so"
use_pair expired
pamt mpin-tls-expired erin 2468
check_all "an expired certificate is PAM_AUTHINFO_UNAVAIL, syslog says expired" \
  '[ "$RC" -ne 0 ] && grep -q "Authentication service cannot retrieve authentication info" <<<"$OUT" && grep -q "outcome=UNAVAILABLE.*TLS.*expired" <<<"$OUT"'
use_pair wronghost
pamt mpin-tls-wronghost erin 2468
check_all "a certificate for another host is PAM_AUTHINFO_UNAVAIL, syslog names the host mismatch" \
  '[ "$RC" -ne 0 ] && grep -q "Authentication service cannot retrieve authentication info" <<<"$OUT" && grep -q "outcome=UNAVAILABLE.*TLS.*\(subject name\|host name\)" <<<"$OUT"'
check "delete erin" [ "$(ctl delete erin >/dev/null 2>&1; echo $?)" -eq 0 ]

# Client settings are kept in the store between logins (10 minutes); a login with kept settings
# that no longer work drops them and succeeds with fresh ones.
# (dora's host-name backend has its own file; pick the one for $BACKEND.)
SETTINGS=$(python3 - "$BACKEND" "$WORK"/store/state-settings-* <<'EOF'
import json, sys
for path in sys.argv[2:]:
    try:
        if json.load(open(path)).get("backend") == sys.argv[1]: print(path)
    except (OSError, ValueError):
        pass
EOF
)
check_all "the client settings are kept, root-only" '[ -n "$SETTINGS" ] && [ "$(stat -c %a "$SETTINGS")" = 600 ]'
# edit_settings PYTHON: rewrites the kept document `d` in place (the file keeps its mode).
edit_settings() {
  python3 - "$SETTINGS" "$1" <<'EOF'
import json, sys, time
path, code = sys.argv[1], sys.argv[2]
d = json.load(open(path))
exec(code)
open(path, "w").write(json.dumps(d))
EOF
}
edit_settings 'd["fetched"] = int(time.time()) - 5'
KEPT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fetched"])' "$SETTINGS")
pamt mpin alice 1234
check_all "a login within 10 minutes uses the kept settings (no refetch)" \
  '[ "$RC" -eq 0 ] && [ "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"fetched\"])" "$SETTINGS")" = "$KEPT" ]'
DEAD=$(free_port)
edit_settings "d['settings']['timePermitsURL'] = 'http://127.0.0.1:$DEAD/rps/timePermit'"
pamt mpin alice 1234
check_all "kept settings that fail before the PIN is used are replaced and the login succeeds" \
  '[ "$RC" -eq 0 ] && ! grep -q "$DEAD" "$SETTINGS" && grep -q mpinAuthServerURL "$SETTINGS"'
# Past StartAuthentication the PIN proof may have been sent: no second attempt (it could count
# a wrong PIN twice); the settings are dropped and the next login fetches them.
edit_settings "d['settings']['mpinAuthServerURL'] = 'http://127.0.0.1:$DEAD/rps'"
pamt mpin alice 1234
check_all "kept settings that fail later fail this login, as backend unavailable" \
  '[ "$RC" -ne 0 ] && grep -q "Authentication service cannot retrieve authentication info" <<<"$OUT" && [ ! -e "$SETTINGS" ]'
pamt mpin alice 1234
check_all "... and the next login fetches them again and succeeds" '[ "$RC" -eq 0 ] && grep -q mpinAuthServerURL "$SETTINGS"'
edit_settings 'd["fetched"] = int(time.time()) - 700'
KEPT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fetched"])' "$SETTINGS")
pamt mpin alice 1234
check_all "settings older than 10 minutes are fetched again" \
  '[ "$RC" -eq 0 ] && [ "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"fetched\"])" "$SETTINGS")" -gt "$KEPT" ]'
printf 'not json' > "$SETTINGS"
pamt mpin alice 1234
check_all "an unreadable settings file is ignored and rewritten" '[ "$RC" -eq 0 ] && grep -q mpinAuthServerURL "$SETTINGS"'
# A writer stuck holding the store's lock: the login's cache writes give up after 1 s instead
# of stretching the login by the store's default 10 s wait.
rm -f "$SETTINGS"
flock "$WORK/store/.lock" sleep 8 &
LOCKER=$!
sleep 0.2
t0=$(millis); pamt mpin alice 1234; took=$(( $(millis) - t0 ))
kill "$LOCKER" 2>/dev/null; wait "$LOCKER" 2>/dev/null
check_all "a held store lock delays a login by at most ~1 s (${took} ms)" '[ "$RC" -eq 0 ] && [ "$took" -lt 3000 ] && [ "$took" -ge 900 ]'

pamt mpin-strict bob 1234
check "unknown user is refused without nouserok" [ "$RC" -ne 0 ]
pamt mpin bob 1234
check "unknown user is PAM_USER_UNKNOWN" grep -q 'User not known' <<<"$OUT"
pamt mpin-nouser bob 1234
check "unknown user is ignored with nouserok" [ "$RC" -eq 0 ]

# Issue 27 item 2: a user with no registration under `nouserok` is answered by the module
# itself, without the helper, when the store's index (state-accounts-index, which every write
# of `accounts` refreshes) proves it and the line and the configuration are ones the module
# models; on any doubt the helper decides, as before. The fast lines name a helper that does
# not exist: a call the module passes on fails (PAM_SERVICE_ERR), one it answers is PAM_IGNORE.
# pamtester gets the test name service too (the module resolves the user as the helper does).
ABSENT="$WORK/absent/mpin-pam-helper"
fast_service() {  # fast_service NAME CONFIG [ARGS...]
  local name=$1 conf=$2; shift 2
  service "$name" "auth [success=done ignore=ignore default=die] $PAM_SO helper=$ABSENT config=$conf $*" \
                  "auth required pam_permit.so" \
                  "account [success=done ignore=ignore default=die] $PAM_SO helper=$ABSENT config=$conf $*" \
                  "account required pam_permit.so"
}
# pamn SERVICE USER [authenticate|acct_mgmt]: pamtester with the module seeing the test users.
pamn() {
  OUT=$(echo 1234 | LD_PRELOAD="libpam_wrapper.so $NSS_SO" PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$SERVICES" \
        PAM_WRAPPER_DEBUGLEVEL=2 timeout 30 pamtester "$1" "$2" "${3:-authenticate}" 2>&1)
  RC=$?
}
INDEX="$WORK/store/state-accounts-index"
fast_service fast "$WORK/mpin.conf" nouserok
check_all "mpinctl wrote the index of registered users, root's and 0600" \
  '[ -f "$INDEX" ] && [ "$(stat -c %u:%a "$INDEX")" = 0:600 ] && grep -qx alice "$INDEX"'
pamn fast frank
check_all "unregistered frank under nouserok: PAM_IGNORE from the module, no helper run" '[ "$RC" -eq 0 ]'
check "... with the helper's own log line" grep -q 'user=frank identity=- outcome=USER_UNKNOWN .*(nouserok: no registration)' <<<"$OUT"
pamn mpin-nouser frank
check "... the same answer the helper gives" [ "$RC" -eq 0 ]
pamn fast frank acct_mgmt
check "account management of unregistered frank: PAM_IGNORE from the module" [ "$RC" -eq 0 ]
pamn fast alice
check "registered alice: the module passes the call on (the absent helper fails it)" [ "$RC" -ne 0 ]
pamn fast alice acct_mgmt
check "... account management too" [ "$RC" -ne 0 ]
pamn fast frankie
check "frankie (frank's look-alike, unregistered) is answered by the module" [ "$RC" -eq 0 ]
OUT=$(echo 1234 | LD_PRELOAD="libpam_wrapper.so $NSS_SO" MPIN_TEST_NSS_NOCASE=1 PAM_WRAPPER=1 \
      PAM_WRAPPER_SERVICE_DIR="$SERVICES" timeout 30 pamtester fast ALICE authenticate 2>&1); RC=$?
check "ALICE, which a case-blind name service maps to registered alice, is passed on" [ "$RC" -ne 0 ]
pamn fast root
check "root is always passed on" [ "$RC" -ne 0 ]
fast_service fast-debug "$WORK/mpin.conf" nouserok debug
pamn fast-debug frank
check "a line with an option the module does not model (debug) is passed on" [ "$RC" -ne 0 ]
fast_service fast-strict "$WORK/mpin.conf"
pamn fast-strict frank
check "without nouserok authentication is passed on" [ "$RC" -ne 0 ]

# Registering frank refreshes the index in the same write: the next login asks for the PIN.
cp -p "$INDEX" "$WORK/index.before-frank"
echo 1234 | ctl register frank --identity frank@example.org --pin-stdin >/dev/null
check "mpinctl registers frank" [ "$?" -eq 0 ]
pamn fast frank
check "registered frank is passed on at once" [ "$RC" -ne 0 ]
pamt mpin-nouser frank 1234
check_all "... and asked for the PIN by the helper" '[ "$RC" -eq 0 ] && grep -q "M-Pin PIN:" <<<"$OUT" && grep -q "user=frank identity=frank@example.org outcome=OK" <<<"$OUT"'
# A stale index (one that omits frank, put back as root's 0600) is not believed: it names
# another document's checksum.
cp -p "$WORK/index.before-frank" "$INDEX"
pamn fast frank
check "a stale index that omits registered frank is not believed" [ "$RC" -ne 0 ]
ctl delete frank >/dev/null 2>&1
pamn fast frank
check "after mpinctl delete frank, the module answers for frank again" [ "$RC" -eq 0 ]

# The store and the index as an attacker might leave them: each is passed on to the helper.
pamn fast frank; check "(the store as mpinctl left it: answered by the module)" [ "$RC" -eq 0 ]
chown nobody "$INDEX"; pamn fast frank; chown root "$INDEX"
check "an index owned by another user is not believed" [ "$RC" -ne 0 ]
chmod 640 "$INDEX"; pamn fast frank; chmod 600 "$INDEX"
check "an index readable by its group is not believed" [ "$RC" -ne 0 ]
mv "$INDEX" "$INDEX.real" && ln -s "$INDEX.real" "$INDEX"; pamn fast frank; rm -f "$INDEX"; mv "$INDEX.real" "$INDEX"
check "a symbolic link in place of the index is not followed" [ "$RC" -ne 0 ]
cp -p "$INDEX" "$WORK/index.saved" && rm -f "$INDEX"; pamn fast frank; cp -p "$WORK/index.saved" "$INDEX"
check "no index: passed on" [ "$RC" -ne 0 ]
printf 'frank\n' >> "$INDEX"; pamn fast frank; cp -p "$WORK/index.saved" "$INDEX"
check "an index edited by hand (a line added: its checksum no longer matches) is not believed" [ "$RC" -ne 0 ]
grep -vx alice "$WORK/index.saved" > "$INDEX"; pamn fast alice; cp -p "$WORK/index.saved" "$INDEX"
check "an index with registered alice's line taken out (the names' checksum no longer matches) is not believed" [ "$RC" -ne 0 ]
# A look-alike registered: frankie's line does not cover frank, nor frank's absence frankie.
echo 1234 | ctl register frankie --identity frankie@example.org --pin-stdin >/dev/null
check "mpinctl registers frankie" [ "$?" -eq 0 ]
pamn fast frank
check "unregistered frank is answered by the module while frankie is registered" [ "$RC" -eq 0 ]
pamn fast frankie
check "registered frankie (frank's look-alike) is passed on" [ "$RC" -ne 0 ]
ctl delete frankie >/dev/null 2>&1
# The line's store= wins over the file's, as in the helper: frank registered only in store2.
mkdir -m 700 "$WORK/store2" && sed "s|^store = .*|store = $WORK/store2|" "$WORK/mpin.conf" > "$WORK/store2.conf"
echo 1234 | LD_PRELOAD="${NSS_SO:-}" "$BIN/mpinctl" --config "$WORK/store2.conf" register frank --identity frank@example.org \
  --pin-stdin >/dev/null
check "mpinctl registers frank in a second store" [ "$?" -eq 0 ]
fast_service fast-store2 "$WORK/mpin.conf" nouserok "store=$WORK/store2"
pamn fast-store2 frank
check "frank, registered in the line's store= (not in the file's store), is passed on" [ "$RC" -ne 0 ]
pamn fast frank
check "... and still answered by the module on a line with the file's store" [ "$RC" -eq 0 ]
fast_service fast-relative "store2.conf" nouserok
pamn fast-relative frank
check "a relative config= (the caller's working directory) is passed on" [ "$RC" -ne 0 ]
chmod 750 "$WORK/store"; pamn fast frank; chmod 700 "$WORK/store"
check "a store directory open to its group is not believed" [ "$RC" -ne 0 ]
chown nobody "$WORK/store"; pamn fast frank; chown root "$WORK/store"
check "a store directory owned by another user is not believed" [ "$RC" -ne 0 ]
ln -s "$WORK/store" "$WORK/store-link"
sed "s|^store = .*|store = $WORK/store-link|" "$WORK/mpin.conf" > "$WORK/linked.conf"
fast_service fast-linked "$WORK/linked.conf" nouserok
pamn fast-linked frank
check "a store reached through a symbolic link is passed on" [ "$RC" -ne 0 ]
# Configurations whose answer for frank the module does not model, or that the helper refuses.
for extra in "require_group = wheel" "exempt_group = wheel" "mode = device" "enrol = yes" "timeout = 5" "no_such_key = 1" "prompt" "pin_length = 9"; do
  { grep -v '^timeout' "$WORK/mpin.conf"; echo "$extra"; } > "$WORK/extra.conf"
  [ "$extra" = "timeout = 5" ] && { cat "$WORK/mpin.conf"; echo "$extra"; } > "$WORK/extra.conf"
  fast_service fast-extra "$WORK/extra.conf" nouserok
  pamn fast-extra frank
  check "a configuration with \"$extra\" (${extra/ =*/} or an error) is passed on" [ "$RC" -ne 0 ]
done
{ cat "$WORK/mpin.conf"; echo "connect_timeout = 1.5"; echo "# a comment"; echo "enrol = no"; echo "mode = token"; } > "$WORK/extra.conf"
pamn fast-extra frank
check "a configuration with only modelled keys is answered by the module" [ "$RC" -eq 0 ]
{ cat "$WORK/mpin.conf"; echo "mode = auto"; } > "$WORK/extra.conf"
pamn fast-extra frank
check "mode = auto (token for a user the store does not name) is answered by the module" [ "$RC" -eq 0 ]
# verdict_key in its form is modelled (the suite's mpin.conf has one); one that is not is passed on.
{ grep -v '^verdict_key' "$WORK/mpin.conf"; echo "verdict_key = 04$(printf 'g%.0s' $(seq 128))"; } > "$WORK/extra.conf"
pamn fast-extra frank
check "a verdict_key that is not 04 and 128 hex digits is passed on (the helper refuses the file)" [ "$RC" -ne 0 ]
cat "$WORK/mpin.conf" > "$WORK/extra.conf"
chmod 664 "$WORK/extra.conf"; pamn fast-extra frank
check "a group-writable configuration is passed on" [ "$RC" -ne 0 ]
fast_service fast-lineopt "$WORK/mpin.conf" nouserok require_group=wheel
pamn fast-lineopt frank
check "a group on the line is passed on" [ "$RC" -ne 0 ]

# A config others can write could point the module at any server: refused (PAM_SERVICE_ERR).
cp "$WORK/mpin.conf" "$WORK/open.conf" && chmod 664 "$WORK/open.conf"
mkfifo "$WORK/fifo.conf"
service mpin-openconf "auth required $MODULE config=$WORK/open.conf" "account required pam_permit.so"
service mpin-fifoconf "auth required $MODULE config=$WORK/fifo.conf" "account required pam_permit.so"
pamt mpin-openconf alice 1234
check "a group-writable config is refused" [ "$RC" -ne 0 ]
check "... as a module error, with the reason in syslog" grep -q 'not writable by group or others' <<<"$OUT"
start=$(millis); PAMT_TIMEOUT=5 pamt mpin-fifoconf alice 1234; took=$(( $(millis) - start ))
check_all "a FIFO config is refused without blocking (${took} ms)" '[ "$RC" -ne 0 ] && [ "$took" -lt 2000 ]'

pamt mpin-badconf alice 1234
check_all "a missing config file is PAM_SERVICE_ERR" '[ "$RC" -ne 0 ] && grep -q "Error in service module" <<<"$OUT"'

# A backend that accepts connections and never answers: the stopped server (the kernel still
# accepts into the listen backlog). The 3 s budget must cut the whole login.
kill -STOP "$SERVER_PID"
start=$(millis); pamt mpin alice 1234; took=$(( $(millis) - start ))
kill -CONT "$SERVER_PID"
check "a backend that never answers fails" [ "$RC" -ne 0 ]
check "a backend that never answers is PAM_AUTHINFO_UNAVAIL" grep -q 'Authentication service cannot retrieve authentication info' <<<"$OUT"
check "... and the user is told why, and that the next method decides (failmode=safe)" \
  grep -q 'M-Pin server cannot be reached: M-Pin was not checked; the next method decides' <<<"$OUT"
check_all "a backend that never answers costs connect_timeout (2 s), inside the 3 s budget (${took} ms)" \
  '[ "$took" -ge 1500 ] && [ "$took" -lt 3500 ]'

# failmode=secure (issue 38, item 7): the same backend down is a refusal, and says so.
service mpin-secure "auth required $MODULE config=$WORK/mpin.conf failmode=secure" "account required pam_permit.so"
kill -STOP "$SERVER_PID"
pamt mpin-secure alice 1234
kill -CONT "$SERVER_PID"
check_all "failmode=secure: a backend that never answers is PAM_AUTH_ERR, and the user is told" \
  '[ "$RC" -ne 0 ] && grep -q "Authentication failure" <<<"$OUT" && grep -q "this login is refused (failmode=secure)" <<<"$OUT"'

# Without TLS a SIGHUP has nothing to reload: logged, the server goes on.
kill -HUP "$SERVER_PID"; sleep 0.3
pamt mpin alice 1234
check_all "a plain-HTTP server survives SIGHUP and logs it" '[ "$RC" -eq 0 ] && grep -q "no TLS certificate to reload" "$WORK/server.log"'

# Backend down: nothing listens on its port any more.
check "the server stops on SIGTERM within 10 s" stop_server
start=$(millis); pamt mpin alice 1234; took=$(( $(millis) - start ))
check "backend down fails" [ "$RC" -ne 0 ]
check "backend down is PAM_AUTHINFO_UNAVAIL" grep -q 'Authentication service cannot retrieve authentication info' <<<"$OUT"
check "backend down answers at once (${took} ms)" [ "$took" -lt 2000 ]
restart_server || exit 1
pamt mpin alice 1234
check "after a server restart the registration still works" [ "$RC" -eq 0 ]

# Two nodes on one data directory (they share the registrations and the wrong-PIN counters):
# logins fail over from a first node that is stopped, silent or gone, within the one budget.
PORT2=$(free_port)
"$BIN/mpin-server" serve --data "$WORK/server" --host 127.0.0.1 --port "$PORT2" >"$WORK/server2.log" 2>&1 &
NODE2_PID=$!; PIDS+=("$NODE2_PID")
for _ in $(seq 1 100); do grep -q ready "$WORK/server2.log" && break; sleep 0.1; done
write_config "$WORK/nodes.conf" "$BACKEND, http://127.0.0.1:$PORT2" "connect_timeout = 1"
service mpin-nodes "auth required $MODULE config=$WORK/nodes.conf debug" "account required pam_permit.so"
pamt mpin-nodes alice 1234
check "two nodes: a login through the first succeeds" [ "$RC" -eq 0 ]
kill -STOP "$SERVER_PID"
start=$(millis); pamt mpin-nodes alice 1234; took=$(( $(millis) - start ))
kill -CONT "$SERVER_PID"
check_all "two nodes: the first silent, the second serves within connect_timeout (1 s) plus a login (${took} ms)" \
  '[ "$RC" -eq 0 ] && [ "$took" -lt 2500 ]'
check "two nodes: debug says the login went on at the second node" \
  grep -q "backend node failed before the PIN proof; trying http://127.0.0.1:$PORT2" <<<"$OUT"
stop_server
start=$(millis); pamt mpin-nodes alice 1234; took=$(( $(millis) - start ))
check_all "two nodes: the first down, the second serves at once (${took} ms)" '[ "$RC" -eq 0 ] && [ "$took" -lt 1500 ]'
pamt mpin-nodes alice 1235
check_all "two nodes: a wrong PIN on the second node is a wrong PIN, not a failover" \
  '[ "$RC" -ne 0 ] && grep -q "Wrong PIN." <<<"$OUT"'
kill "$NODE2_PID"; wait "$NODE2_PID" 2>/dev/null
start=$(millis); pamt mpin-nodes alice 1234; took=$(( $(millis) - start ))
check_all "two nodes: both down is PAM_AUTHINFO_UNAVAIL within the budget (${took} ms)" \
  '[ "$RC" -ne 0 ] && grep -q "Authentication service cannot retrieve authentication info" <<<"$OUT" && [ "$took" -lt 3500 ]'
restart_server || exit 1
pamt mpin alice 1234
check "the first node back: logins go on (the wrong PIN was reset by the success)" [ "$RC" -eq 0 ]

# Three wrong PINs block the identity; the right PIN no longer works.
pamt mpin carol 1111
check_all "first wrong PIN is a plain failure" '[ "$RC" -ne 0 ] && grep -q "Wrong PIN." <<<"$OUT"'
pamt mpin carol 2222
check_all "second wrong PIN is still a plain failure" '[ "$RC" -ne 0 ] && grep -q "Wrong PIN." <<<"$OUT"'
pamt mpin carol 3333
check "third wrong PIN blocks" grep -q 'blocked' <<<"$OUT"
check "blocked is PAM_MAXTRIES" grep -q 'Have exhausted maximum number of retries' <<<"$OUT"
pamt mpin carol 4321
check "a blocked identity fails even with the right PIN" [ "$RC" -ne 0 ]
check "mpinctl shows carol BLOCKED" grep -q BLOCKED <<<"$(ctl show carol)"
# pam_sm_acct_mgmt (its own helper run): a blocked identity is PAM_PERM_DENIED, anyone else
# PAM_IGNORE, so the stack's next module decides.
service mpin-account "auth required pam_permit.so" "account required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"
acct() {
  OUT=$(LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$SERVICES" PAM_WRAPPER_DEBUGLEVEL=2 \
        timeout 30 pamtester mpin-account "$1" acct_mgmt 2>&1)
  RC=$?
}
acct carol
check_all "account management refuses the blocked identity" '[ "$RC" -ne 0 ] && grep -q "Permission denied" <<<"$OUT"'
acct alice
check_all "account management has no opinion on alice (PAM_IGNORE: pam_permit decides)" '[ "$RC" -eq 0 ] && grep -q "account management done" <<<"$OUT"'

# The store must stay private: a world-readable store is refused.
chmod 755 "$WORK/store"
pamt mpin alice 1234
check "an insecure store is refused" [ "$RC" -ne 0 ]
check "the refusal names the store" grep -q "$WORK/store" <<<"$OUT"
chmod 700 "$WORK/store"

# mpinctl's own exit statuses and output are checked in Swift (Tests/MPinCtlTests); here only
# what it does to a user the module knows.
check "delete carol" [ "$(ctl delete carol >/dev/null 2>&1; echo $?)" -eq 0 ]
pamt mpin carol 4321
check "a deleted user is unknown to the module" grep -q 'User not known' <<<"$OUT"

# A user name with a line break (as a remote client may send) cannot forge a syslog line.
pamt mpin $'mallory\noutcome=OK' 1234
check_all "control characters in the user name are masked in syslog" \
  'grep -q "user=mallory?outcome=OK" <<<"$OUT" && ! grep -q "^outcome=OK" <<<"$OUT"'

# pam_mpin.so and its helper (pam/Module): a helper that is missing, not trusted, ends
# without a result or stays silent costs one failed call (PAM_SERVICE_ERR), logged. The test
# helpers live in $TRUSTED (lib.sh): /tmp is writable by everyone, so the module refuses
# anything under it.
"$BIN/mpin-pam-helper" </dev/null >/dev/null 2>&1
check "mpin-pam-helper run by hand (fd 0 not a socket) refuses with status 2" [ "$?" -eq 2 ]
check "a directory for trusted test helpers" [ -n "$TRUSTED" ]
cp -p "$BIN/mpin-pam-helper" "$TRUSTED/helper-gw" && chmod 775 "$TRUSTED/helper-gw"
# (sleep 60.123: a duration no other program on the machine is likely to sleep, so that the
# check below finds this helper's process, not another suite's)
printf '#!/bin/sh\nexec sleep 60.123\n' > "$TRUSTED/helper-silent" && chmod 755 "$TRUSTED/helper-silent"
# (its frames go to fd 0, the module's socket; stdout is /dev/null)
printf '#!/bin/sh\nprintf "X\\000\\000\\000\\000" >&0\nexec sleep 60\n' > "$TRUSTED/helper-garbage" && chmod 755 "$TRUSTED/helper-garbage"
FALSE=$(readlink -f /bin/false)  # /bin is a symbolic link on merged-/usr systems: refused
service mpin-garbagehelper "auth required $PAM_SO helper=$TRUSTED/helper-garbage config=$WORK/mpin.conf" "account required pam_permit.so"
service mpin-nohelper "auth required $PAM_SO helper=$TRUSTED/missing-helper config=$WORK/mpin.conf" "account required pam_permit.so"
service mpin-relhelper "auth required $PAM_SO helper=bin/mpin-pam-helper config=$WORK/mpin.conf" "account required pam_permit.so"
service mpin-gwhelper "auth required $PAM_SO helper=$TRUSTED/helper-gw config=$WORK/mpin.conf" "account required pam_permit.so"
service mpin-falsehelper "auth required $PAM_SO helper=$FALSE config=$WORK/mpin.conf" "account required pam_permit.so"
service mpin-silenthelper "auth required $PAM_SO helper=$TRUSTED/helper-silent config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-nohelper alice 1234
check_all "a missing helper is PAM_SERVICE_ERR, logged with its path" \
  '[ "$RC" -ne 0 ] && grep -q "Error in service module" <<<"$OUT" && grep -q "cannot run $TRUSTED/missing-helper" <<<"$OUT"'
pamt mpin-relhelper alice 1234
check_all "a relative helper path is refused" '[ "$RC" -ne 0 ] && grep -q "helper=bin/mpin-pam-helper: not an absolute path" <<<"$OUT"'
pamt mpin-gwhelper alice 1234
check_all "a group-writable helper is refused" '[ "$RC" -ne 0 ] && grep -q "refusing to run $TRUSTED/helper-gw" <<<"$OUT"'
pamt mpin-falsehelper alice 1234
check_all "a helper that ends without a result is PAM_SERVICE_ERR" \
  '[ "$RC" -ne 0 ] && grep -q "Error in service module" <<<"$OUT" && grep -q "$FALSE stopped: it ended without a result" <<<"$OUT"'
T0=$(millis); pamt mpin-garbagehelper alice 1234; T1=$(millis)
check_all "a helper that breaks the protocol is stopped at once and is PAM_SERVICE_ERR ($((T1 - T0)) ms)" \
  '[ "$RC" -ne 0 ] && grep -q "Error in service module" <<<"$OUT" && grep -q "helper-garbage stopped: it broke the protocol" <<<"$OUT" && [ $((T1 - T0)) -lt 2000 ]'

# The helper is opened without following symbolic links, checked on that descriptor with every
# directory above it, and that descriptor is what runs (issue 24, finding 3: the C module
# checked with stat() and then ran the path, so a symbolic link or a directory a user could
# change swapped in that user's program). Each of these would run the real helper, and log
# alice in with her right PIN, if the module followed the path.
ln -s "$BIN/mpin-pam-helper" "$TRUSTED/helper-link"
service mpin-linkhelper "auth required $PAM_SO helper=$TRUSTED/helper-link config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-linkhelper alice 1234
check_all "a helper= that is a symbolic link (to the real helper) is refused" \
  '[ "$RC" -ne 0 ] && grep -q "refusing to run $TRUSTED/helper-link: it is a symbolic link" <<<"$OUT" && ! grep -q "outcome=OK" <<<"$OUT"'
ln -s "$(readlink -f "$BIN")" "$TRUSTED/linked-bin"
service mpin-linkdirhelper "auth required $PAM_SO helper=$TRUSTED/linked-bin/mpin-pam-helper config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-linkdirhelper alice 1234
check_all "a helper reached through a symbolically linked directory is refused" \
  '[ "$RC" -ne 0 ] && grep -q "refusing to run $TRUSTED/linked-bin/mpin-pam-helper: $TRUSTED/linked-bin is a symbolic link or not a directory" <<<"$OUT" && ! grep -q "outcome=OK" <<<"$OUT"'
mkdir "$TRUSTED/users" && cp -p "$BIN/mpin-pam-helper" "$TRUSTED/users/" && chown nobody "$TRUSTED/users"
service mpin-userdirhelper "auth required $PAM_SO helper=$TRUSTED/users/mpin-pam-helper config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-userdirhelper alice 1234
check_all "a root-owned helper in a directory another user owns is refused" \
  '[ "$RC" -ne 0 ] && grep -q "refusing to run $TRUSTED/users/mpin-pam-helper: $TRUSTED/users must be owned by root and writable only by root" <<<"$OUT" && ! grep -q "outcome=OK" <<<"$OUT"'
mkdir "$TRUSTED/open" && cp -p "$BIN/mpin-pam-helper" "$TRUSTED/open/" && chmod 1777 "$TRUSTED/open"
service mpin-opendirhelper "auth required $PAM_SO helper=$TRUSTED/open/mpin-pam-helper config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-opendirhelper alice 1234
check_all "a root-owned helper in a world-writable directory (sticky, as /tmp) is refused" \
  '[ "$RC" -ne 0 ] && grep -q "refusing to run $TRUSTED/open/mpin-pam-helper: $TRUSTED/open must be owned by root" <<<"$OUT" && ! grep -q "outcome=OK" <<<"$OUT"'
# A sticky world-writable directory the path only passes through (as /tmp) is allowed: only
# root can rename or remove root's entries there, and the next directory must be root's.
# The helpers that are run here are copies of the real one, without the suites' test name
# service (nss_setup): they log in daemon, an account every Debian system has.
echo 1234 | ctl register daemon --identity daemon@example.org --pin-stdin >/dev/null
mkdir -m 755 "$TRUSTED/open/inner" && cp -p "$BIN/mpin-pam-helper" "$TRUSTED/open/inner/"
service mpin-belowopen "auth required $PAM_SO helper=$TRUSTED/open/inner/mpin-pam-helper config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-belowopen daemon 1234
check "a helper in root's 0755 directory below a sticky world-writable one runs" [ "$RC" -eq 0 ]
mkdir "$TRUSTED/group" && cp -p "$BIN/mpin-pam-helper" "$TRUSTED/group/" && chmod 775 "$TRUSTED/group"
service mpin-groupdirhelper "auth required $PAM_SO helper=$TRUSTED/group/mpin-pam-helper config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-groupdirhelper alice 1234
check_all "a root-owned helper in a group-writable directory is refused" \
  '[ "$RC" -ne 0 ] && grep -q "refusing to run $TRUSTED/group/mpin-pam-helper" <<<"$OUT" && ! grep -q "outcome=OK" <<<"$OUT"'
mkfifo "$TRUSTED/helper-fifo"
service mpin-fifohelper "auth required $PAM_SO helper=$TRUSTED/helper-fifo config=$WORK/mpin.conf" "account required pam_permit.so"
T0=$(millis); PAMT_TIMEOUT=5 pamt mpin-fifohelper alice 1234; T1=$(millis)
check_all "a FIFO as helper is refused without blocking ($((T1 - T0)) ms)" \
  '[ "$RC" -ne 0 ] && grep -q "refusing to run $TRUSTED/helper-fifo: it must be a regular file" <<<"$OUT" && [ $((T1 - T0)) -lt 2000 ]'
# The real helper, named by a path of trusted directories, still runs: the refusals above are
# the directories' and links' doing.
cp -p "$BIN/mpin-pam-helper" "$TRUSTED/mpin-pam-helper"
service mpin-copyhelper "auth required $PAM_SO helper=$TRUSTED/mpin-pam-helper config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-copyhelper daemon 1234
check "the same helper in a trusted directory logs daemon in" [ "$RC" -eq 0 ]

# What the module gives its helper: the START frame's call byte, flags (PAM_SILENT here) and
# arguments, only fds 0-2 (a script also keeps the file it runs from, for its interpreter),
# and an environment of its own. The helper is a script that logs what it got and says yes.
cat > "$TRUSTED/helper-echo" <<'PY'
#!/usr/bin/python3
import os, socket, struct
s = socket.socket(fileno=0)
def read(n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise SystemExit(3)
        data += chunk
    return data
kind, length = struct.unpack(">cI", read(5))
payload = read(length)
flags = struct.unpack(">I", payload[1:5])[0]
args = payload[5:].split(b"\0")[:-1]
def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
fds = [fd for fd in range(256) if is_open(fd)]
line = "start=%s call=%s flags=%d args=%s fds=%s env=%s" % (kind.decode(), chr(payload[0]), flags,
    ",".join(a.decode() for a in args), ",".join(map(str, fds)), ",".join(sorted(os.environ)))
def frame(kind, payload):
    s.sendall(kind + struct.pack(">I", len(payload)) + payload)
frame(b"L", b"\x06" + line.encode())
frame(b"E", b"\x00")
PY
chmod 755 "$TRUSTED/helper-echo"
service mpin-echohelper "auth required $PAM_SO helper=$TRUSTED/helper-echo one two=2" "account required pam_permit.so"
OUT=$(LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$SERVICES" PAM_WRAPPER_DEBUGLEVEL=2 \
      timeout 30 pamtester mpin-echohelper alice 'authenticate(PAM_SILENT)' 2>&1); RC=$?
check_all "START carries the call, the flags (PAM_SILENT) and the arguments" \
  '[ "$RC" -eq 0 ] && grep -q "start=S call=a flags=32768 args=helper=$TRUSTED/helper-echo,one,two=2 " <<<"$OUT"'
check_all "the helper gets fds 0-2 and 3 (the script itself, for its interpreter), PATH and SWIFT_BACKTRACE only (python adds LC_CTYPE)" \
  'grep -Eq " fds=0,1,2,3 env=(LC_CTYPE,)?PATH,SWIFT_BACKTRACE$" <<<"$OUT"'
# A compiled helper (no interpreter) keeps nothing but fds 0-2: the file it runs from is
# close-on-exec.
cat > "$WORK/helper-fds.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
    unsigned char h[5], buf[4096];
    if (read(0, h, 5) != 5) return 1;
    size_t len = (size_t)h[1] << 24 | (size_t)h[2] << 16 | (size_t)h[3] << 8 | h[4];
    while (len > 0) { ssize_t n = read(0, buf, len < sizeof buf ? len : sizeof buf); if (n <= 0) return 1; len -= (size_t)n; }
    char line[512] = "fds=";
    for (int fd = 0; fd < 256; fd++)
        if (fcntl(fd, F_GETFD) != -1) snprintf(line + strlen(line), sizeof line - strlen(line), "%s%d", line[4] ? "," : "", fd);
    size_t n = strlen(line);
    unsigned char frame[600] = {'L', 0, 0, (unsigned char)((n + 1) >> 8), (unsigned char)(n + 1), 6};
    memcpy(frame + 6, line, n);
    unsigned char result[6] = {'E', 0, 0, 0, 1, 0};
    return write(0, frame, n + 6) == (ssize_t)(n + 6) && write(0, result, 6) == 6 ? 0 : 1;
}
C
"$(command -v clang || command -v cc)" -o "$TRUSTED/helper-fds" "$WORK/helper-fds.c" && chmod 755 "$TRUSTED/helper-fds"
service mpin-fdshelper "auth required $PAM_SO helper=$TRUSTED/helper-fds"
pamt mpin-fdshelper alice ""
check_all "a compiled helper gets exactly fds 0, 1 and 2" '[ "$RC" -eq 0 ] && grep -q "fds=0,1,2$" <<<"$OUT"'
printf '#!/bin/sh\nkill -SEGV $$\n' > "$TRUSTED/helper-crash" && chmod 755 "$TRUSTED/helper-crash"
service mpin-crashhelper "auth required $PAM_SO helper=$TRUSTED/helper-crash"
pamt mpin-crashhelper alice ""
check_all "a helper that crashes is PAM_SERVICE_ERR, logged with its signal" \
  '[ "$RC" -ne 0 ] && grep -q "Error in service module" <<<"$OUT" && grep -q "helper-crash stopped: signal 11" <<<"$OUT"'
service mpin-account-echo "auth required pam_permit.so" "account required $PAM_SO helper=$TRUSTED/helper-echo"
OUT=$(LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$SERVICES" PAM_WRAPPER_DEBUGLEVEL=2 \
      timeout 30 pamtester mpin-account-echo alice acct_mgmt 2>&1); RC=$?
check_all "account management is call m with flags 0" '[ "$RC" -eq 0 ] && grep -q "start=S call=m flags=0 args=helper=" <<<"$OUT"'

# A host with threads and children of its own (pam-thread-check.c, host mode): the module
# forks while another thread allocates, reaps its own helper and leaves the host's exited
# child for the host to reap.
check_all "a multithreaded host keeps its own child and is left no other (rc=0 child=kept others=none)" \
  '[[ "$(threads_of mpin alice 1234 host)" == "rc=0 threads=2,2,2 child=kept others=none" ]]'

# The helper's side: a START frame longer than the protocol allows ends it (status 1) at once.
python3 - "$BIN/mpin-pam-helper" <<'PY'
import socket, subprocess, sys
a, b = socket.socketpair()
p = subprocess.Popen([sys.argv[1]], stdin=b, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
b.close()
a.sendall(b"S\x7f\xff\xff\xff")
sys.exit(0 if p.wait(timeout=10) == 1 and a.recv(1) == b"" else 1)
PY
check "mpin-pam-helper refuses an oversized frame from the module and exits 1" [ "$?" -eq 0 ]
# A START without the 4 flag bytes (the format before the flags) ends it too, with no frame sent.
python3 - "$BIN/mpin-pam-helper" <<'PY'
import socket, subprocess, sys
a, b = socket.socketpair()
p = subprocess.Popen([sys.argv[1]], stdin=b, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
b.close()
a.sendall(b"S\x00\x00\x00\x04a\x00\x00\x00")
sys.exit(0 if p.wait(timeout=10) == 1 and a.recv(1) == b"" else 1)
PY
check "mpin-pam-helper refuses a START too short to hold the flags and exits 1" [ "$?" -eq 0 ]
T0=$(millis); pamt mpin-silenthelper alice 1234; T1=$(millis)
check_all "a silent helper is stopped after 10 s (its first watchdog), nothing left running ($((T1 - T0)) ms)" \
  '[ "$RC" -ne 0 ] && grep -q "stopped: it did not answer in time" <<<"$OUT" && [ $((T1 - T0)) -lt 13000 ] && ! pgrep -f "sleep 60.123" >/dev/null'

# The tools' own failures must fail these checks, so their output is taken only if they succeed.
LDD_OUT=$(ldd "$PAM_SO") && LDD_RC=0 || LDD_RC=$?
NM_OUT=$(nm -D --defined-only "$PAM_SO" | awk '$2 ~ /[A-Z]/ {print $3}') && NM_RC=0 || NM_RC=$?
check_all "the module links no libswift" '[ "$LDD_RC" -eq 0 ] && grep -q "libc.so" <<<"$LDD_OUT" && ! grep -q libswift <<<"$LDD_OUT"'
# libcurl is loaded on first use: not when sudo or sshd load the module.
check_all "the module does not link libcurl at load time" '[ "$LDD_RC" -eq 0 ] && ! grep -q libcurl <<<"$LDD_OUT"'
check_all "the module exports only pam_sm_*" \
  '[ "$NM_RC" -eq 0 ] && grep -qx pam_sm_authenticate <<<"$NM_OUT" && ! grep -qv "^pam_sm_" <<<"$NM_OUT"'
# Issue 25: the module is Embedded Swift, as small as the C one was, hardened like it.
STRIPPED="$WORK/pam_mpin.stripped.so"
SIZE=$(strip -o "$STRIPPED" "$PAM_SO" && stat -c %s "$STRIPPED") || SIZE=""
check_all "the stripped module is at most 64 KiB (${SIZE:-?} bytes)" '[ -n "$SIZE" ] && [ "$SIZE" -le 65536 ]'
DYN=$(readelf -d "$PAM_SO") && PHDRS=$(readelf -lW "$PAM_SO") && SYMS=$(nm -D "$PAM_SO") && ELF_RC=0 || ELF_RC=$?
check_all "the module has full RELRO (BIND_NOW, GNU_RELRO) and a non-executable stack" \
  '[ "$ELF_RC" -eq 0 ] && grep -q "BIND_NOW" <<<"$DYN" && grep -q "GNU_RELRO" <<<"$PHDRS" && grep -E "GNU_STACK" <<<"$PHDRS" | grep -qv "RWE"'
check_all "the module has a stack protector and needs no swift_* symbol" \
  '[ "$ELF_RC" -eq 0 ] && grep -q " U __stack_chk_fail" <<<"$SYMS" && ! grep -q "swift_" <<<"$SYMS"'
check "a Swift file defines the PAM entry points; no C file does" \
  bash -c 'grep -q "@_cdecl(\"pam_sm_authenticate\")" "$1"/pam/Module/*.swift && ! grep -rl pam_sm_authenticate --include="*.c" "$1/pam" "$1/Sources"' _ "$ROOT"

summary
