#!/usr/bin/env bash
# pam_mpin.so over TLS, through pamtester and libpam-wrapper (lib.sh): mpin-server serving HTTPS
# itself, its certificate reloaded on SIGHUP, and every TLS failure a PAM_AUTHINFO_UNAVAIL.
# Needs the release builds of pam_mpin, mpinctl and mpin-server (make test-pam).
# README recipes covered here: "Run mpin-server" (init --self-signed with cacert on the clients;
# a SIGHUP reload).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"

suite_setup
echo 1234 | ctl register alice --identity alice@example.org --pin-stdin >/dev/null || fail "mpinctl registers alice"
build_thread_check

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

summary
