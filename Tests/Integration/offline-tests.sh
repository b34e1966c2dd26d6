#!/usr/bin/env bash
# Offline logins with the host's TPM (docs/SECURITY.md, "Offline logins"; README, "Offline
# logins"), against swtpm: software TPMs this suite starts on 127.0.0.1, on ports it chooses,
# and stops. An online login seals; with every backend node unreachable the right PIN logs in
# offline, wrong ones are counted by the host and by the TPM; an answer from the backend (wrong
# PIN, a server error, an impostor's) never leads to an offline check; offline_max_age, a signed
# REVOKED or BLOCKED answer, mpinctl delete and a new registration end offline logins; a store
# copied to a host with another TPM, or changed, is useless; no TPM means no offline login.
# Needs the release builds (make test-pam), pamtester + libpam-wrapper, swtpm and tpm2-tools.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"

for tool in swtpm tpm2_getcap tpm2_dictionarylockout; do
  command -v "$tool" >/dev/null || { echo "offline-tests: $tool is missing (make packages installs swtpm and tpm2-tools)"; exit 1; }
done

# lockout_counter TCTI: the TPM's count of failed authorisations (TPM2_PT_LOCKOUT_COUNTER).
lockout_counter() { printf '%d\n' "$(tpm2_getcap properties-variable -T "$1" | sed -n 's/^TPM2_PT_LOCKOUT_COUNTER: //p')"; }
in_lockout() { tpm2_getcap properties-variable -T "$1" | grep -q 'inLockout: *1'; }

ALL_OUTPUT="$WORK/all-output"
: > "$ALL_OUTPUT"
# Every login's output, for the check that no PIN or secret reaches any of it (lib.sh's pamt).
PAMT_LOG=$ALL_OUTPUT

pam_setup
start_server || exit 1
start_swtpm A || exit 1
start_swtpm B || exit 1
# The TPMs allow more wrong authorisations than the host does (the host's count is tested
# first); the TPM's own lockout is tested at the end with a lower limit.
for t in "$TCTI_A" "$TCTI_B"; do tpm2_dictionarylockout -T "$t" -s -n 32 -t 600 -l 600 >/dev/null || exit 1; done

# Six-digit PINs no log line would show by chance (durations, ports).
PIN=482916
WRONG=730518
offline_config() {
  local file=$1 tcti=$2; shift 2
  write_config "$file" "$BACKEND" "connect_timeout = 1" "pin_length = 6" "offline = yes" "offline_attempts = 3" "tpm = $tcti" "$@"
}
offline_config "$WORK/mpin.conf" "$TCTI_A"
service mpin "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"
# A user's offline values in the store: state-offline-H (the record) and state-offline-H-state (the
# host's count), H the first 32 hex digits of the identity's SHA-256.
record_path() { echo "$WORK/store/state-offline-$(printf %s "$1" | sha256sum | cut -c1-32)"; }
record() { local f; f=$(record_path "${1:-alice@example.org}"); [ -f "$f" ] && echo "$f"; }
failures() {
  local f; f="$(record_path "${1:-alice@example.org}")-state"
  if [ -f "$f" ]; then sed -n 's/^failures //p' "$f"; else echo 0; fi
}

echo "$PIN" | ctl register alice --identity alice@example.org --pin-stdin >/dev/null 2>&1
check "alice is registered" [ "$?" -eq 0 ]

# --- Enrolment at an online success --------------------------------------------------------
pamt mpin alice "$PIN"
check "online: alice's right PIN logs in" [ "$RC" -eq 0 ]
check "online: the log line does not say offline" bash -c '! grep -q "mode=offline" <<<"$1"' _ "$OUT"
check "online: the login made an offline record" grep -q "offline: record made for alice@example.org" <<<"$OUT"
REC=$(record)
check_all "the record is in the store, root's, 0600" '[ -n "$REC" ] && [ "$(stat -c %a:%u "$REC")" = "600:0" ]'
check_all "the record holds salt, the TPM object's parts, the online time and a MAC" \
  'for k in salt public private online mac; do grep -q "^$k " "$REC" || exit 1; done'
FIRST_REC=$(sha256sum < "$REC")
pamt mpin alice "$PIN"
check_all "a second online login the same day does not make the record again" '[ "$(sha256sum < "$REC")" = "$FIRST_REC" ]'

# --- Backend unreachable: the TPM decides ----------------------------------------------------
stop_server
pamt mpin alice "$PIN"
check "offline: the right PIN logs in" [ "$RC" -eq 0 ]
check "offline: the log line says mode=offline" grep -q "mode=offline outcome=OK" <<<"$OUT"
check "offline: the user is told it was an offline login" grep -q "this was an offline login" <<<"$OUT"
check "offline: a right PIN is not counted" [ "$(failures)" -eq 0 ]

pamt mpin alice "$WRONG"
check "offline: a wrong PIN is refused" [ "$RC" -ne 0 ]
check "offline: logged as an offline INCORRECT_PIN" grep -q "mode=offline outcome=INCORRECT_PIN" <<<"$OUT"
check "offline: the host counted it" [ "$(failures)" -eq 1 ]
check "offline: the TPM counted it" [ "$(lockout_counter "$TCTI_A")" -eq 1 ]
pamt mpin alice "$WRONG"
pamt mpin alice "$WRONG"
check "offline: three wrong PINs counted" [ "$(failures)" -eq 3 ]
TPM_COUNT=$(lockout_counter "$TCTI_A")
pamt mpin alice "$PIN"
check "offline: after offline_attempts wrong PINs even the right one is refused" [ "$RC" -ne 0 ]
check "offline: the log says why" grep -q "refused after 3 wrong offline PINs" <<<"$OUT"
check "offline: the refused try never reached the TPM" [ "$(lockout_counter "$TCTI_A")" -eq "$TPM_COUNT" ]

restart_server || exit 1
pamt mpin alice "$PIN"
check "online again: the right PIN logs in" [ "$RC" -eq 0 ]
check "online again: the offline logins are reported in the log" grep -q "offline logins since the last online login: .* mpin OK, .* mpin INCORRECT_PIN" <<<"$OUT"
# The backend, the authority over the user, sees them too (docs/PROTOCOL.md §4.5.2): the report
# went with this login's final step, bound to its verdict nonce. One OK and three wrong PINs.
check "online again: the backend recorded the report" grep -q "reported to the backend, which recorded 4 new" <<<"$OUT"
SHOW=$("$BIN/mpin-server" user show --data "$WORK/server" alice@example.org)
check "mpin-server user show: the offline OK, with this host's name and the service" \
  grep -qP "^offline [^\t]*\thost=$(hostname | tr -c 'A-Za-z0-9._\n-' _)\tservice=mpin\toutcome=OK\t" <<<"$SHOW"
check "mpin-server user show: the three offline wrong PINs" [ "$(grep -c "outcome=INCORRECT_PIN" <<<"$SHOW")" -eq 3 ]
check "mpin-server user show --json: four offline logins" \
  python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if len(d["offlineLogins"]) == 4 else 1)' \
  < <("$BIN/mpin-server" user show --json --data "$WORK/server" alice@example.org)
check "mpin-server's log: the report, without the user's name" \
  bash -c 'grep "offline logins reported" "$1" | grep -q "new=4" && ! grep "offline logins reported" "$1" | grep -q alice' _ "$WORK/server.log"
check "mpin-server's metrics count them" \
  bash -c 'm=$(python3 -c "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())" "$1/metrics")
    grep -q "mpin_offline_logins_reported_total{outcome=\"ok\"} 1" <<<"$m" && grep -q "mpin_offline_logins_reported_total{outcome=\"wrong_pin\"} 3" <<<"$m"' _ "$BACKEND"
check "online again: the host's count is reset" [ "$(failures)" -eq 0 ]
stop_server
pamt mpin alice "$PIN"
check "offline after the online success: unlocked, the right PIN logs in" [ "$RC" -eq 0 ]

# Six wrong PINs at once (six ssh connections, say): the host's count is read and written under
# a lock, so only offline_attempts of them reach the TPM.
TPM_COUNT=$(lockout_counter "$TCTI_A")
GUESSES=()
for i in 1 2 3 4 5 6; do
  ( printf '%s\n' "$WRONG" | LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$SERVICES" \
      PAM_WRAPPER_DEBUGLEVEL=2 timeout 30 pamtester mpin alice authenticate > "$WORK/parallel.$i" 2>&1 ) &
  GUESSES+=($!)
  pam_wrapper_ready "$WORK/parallel.$i" 2
done
wait "${GUESSES[@]}"
cat "$WORK"/parallel.* >> "$ALL_OUTPUT"
check "parallel wrong PINs: the host counted offline_attempts of them" [ "$(failures)" -eq 3 ]
check "parallel wrong PINs: only offline_attempts reached the TPM" [ "$(lockout_counter "$TCTI_A")" -eq $((TPM_COUNT + 3)) ]
check_all "parallel wrong PINs: the others were refused by the host's count" \
  '[ "$(cat "$WORK"/parallel.* | grep -c "refused after 3 wrong offline PINs")" -eq 3 ]'
restart_server || exit 1
pamt mpin alice "$PIN"
check "online again after the parallel guesses: the count is reset" [ "$(failures)" -eq 0 ]
stop_server

# --- A relay rewrites the report -----------------------------------------------------------------
# Someone holds the backend's port (during a restart, say) and forwards to the server on another.
# "report": rewrites the final step's offlineLogins only: the server finds it does not hash to
# the nonce sealed in the authOTT and records nothing, the login itself is unharmed. "nonce":
# also puts the hash of its own report into pass 2's verdictNonce: then the verdict is signed
# over the relay's nonce and the host refuses the login.
RELAY_PORT=$PORT
pamt mpin alice "$PIN"
check "relay: an offline login to report" [ "$RC" -eq 0 ]
PORT=$(free_port); restart_server || exit 1
start_relay report || exit 1
pamt mpin alice "$PIN"
check_all "relay rewrites the report: the login succeeds, the backend acknowledges nothing, the host keeps its logins" \
  '[ "$RC" -eq 0 ] && grep -q "rewrote the report" "$WORK/relay.log" && grep -q "did not acknowledge the report: kept for the next online login" <<<"$OUT"'
check "relay adds an unsigned acknowledgment: not believed" grep -q "added an unsigned acknowledgment" "$WORK/relay.log"
check "relay rewrites the report: mpin-server's log says why" bash -c 'grep "offline logins refused" "$1" | grep -q "not bound to the login"' _ "$WORK/server.log"
check "relay rewrites the report: user show has nothing of it" \
  bash -c '! "$1/mpin-server" user show --data "$2" alice@example.org | grep -q forged' _ "$BIN" "$WORK/server"
stop_relay; stop_server
pamt mpin alice "$PIN"
restart_server || exit 1
start_relay nonce || exit 1
pamt mpin alice "$PIN"
check_all "relay rewrites the nonce to fit its own report: the host refuses the verdict, the user sees the login fail" \
  '[ "$RC" -ne 0 ] && grep -q "rewrote the nonce" "$WORK/relay.log" && grep -q "not signed with the key pinned" <<<"$OUT"'
check "... and the host keeps its own report for the next login" grep -q "login .* mpin OK" "$(record_path alice@example.org)-state"
stop_relay; stop_server
PORT=$RELAY_PORT
# Back on its own port, with no one in between: the next online login reports both offline
# logins the relays kept from the backend, and the host forgets them on the signed acknowledgment.
restart_server || exit 1
pamt mpin alice "$PIN"
check_all "the next clean online login reports the kept logins, acknowledged" \
  '[ "$RC" -eq 0 ] && grep -q "which recorded 2 new" <<<"$OUT" && [ ! -e "$(record_path alice@example.org)-state" ]'
stop_server

# --- An answer is never a reason to go offline -----------------------------------------------
restart_server || exit 1
pamt mpin alice "$WRONG"
check "backend answers wrong PIN: refused" [ "$RC" -ne 0 ]
check "backend answers wrong PIN: no offline check" bash -c '! grep -q "mode=offline" <<<"$1"' _ "$OUT"
check "backend answers wrong PIN: logged INCORRECT_PIN" grep -q "outcome=INCORRECT_PIN" <<<"$OUT"
python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
  "$BACKEND/rps/clientSettings" > "$WORK/settings.json"
stop_server
TPM_COUNT=$(lockout_counter "$TCTI_A")
for mode in ok wrongpin blocked revoked; do
  : > "$WORK/fake.log"
  python3 "$ROOT/Tests/Integration/fake-backend.py" "$PORT" "$WORK/fake.log" "$WORK/settings.json" carol@example.org "$mode" &
  FAKE_PID=$!
  PIDS+=("$FAKE_PID")
  wait_port "$PORT" || fail "the fake backend ($mode) did not start"
  pamt mpin alice "$PIN"
  check "an impostor on the port ($mode): no login" [ "$RC" -ne 0 ]
  check "an impostor on the port ($mode): no offline check" bash -c '! grep -q "mode=offline" <<<"$1"' _ "$OUT"
  kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null
done
check_all "the impostors' unsigned answers removed no offline record" '[ -n "$(record)" ]'
# A server error: an answer too.
python3 - "$PORT" <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self): self.send_error(500)
    do_POST = do_GET
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
ERR_PID=$!
PIDS+=("$ERR_PID")
wait_port "$PORT" || fail "the server answering 500 did not start"
pamt mpin alice "$PIN"
check "a backend answering 500: no login" [ "$RC" -ne 0 ]
check "a backend answering 500: no offline check" bash -c '! grep -q "mode=offline" <<<"$1"' _ "$OUT"
kill "$ERR_PID" 2>/dev/null; wait "$ERR_PID" 2>/dev/null
check "no answer above reached the TPM" [ "$(lockout_counter "$TCTI_A")" -eq "$TPM_COUNT" ]

# --- offline_max_age --------------------------------------------------------------------------
offline_config "$WORK/maxage.conf" "$TCTI_A" "offline_max_age = 1s"
service mpin-maxage "auth required $MODULE config=$WORK/maxage.conf" "account required pam_permit.so"
sleep 2
pamt mpin-maxage alice "$PIN"
check "older than offline_max_age: refused" [ "$RC" -ne 0 ]
check "older than offline_max_age: the log says why" grep -q "older than offline_max_age" <<<"$OUT"
check "older than offline_max_age: no offline login" bash -c '! grep -q "mode=offline outcome=OK" <<<"$1"' _ "$OUT"

# --- The store on another host's TPM, and a changed record ------------------------------------
cp -a "$WORK/store" "$WORK/store-copy"
sed "s|^store = .*|store = $WORK/store-copy|" "$WORK/mpin.conf" | sed "s|^tpm = .*|tpm = $TCTI_B|" > "$WORK/other-host.conf"
service mpin-other "auth required $MODULE config=$WORK/other-host.conf" "account required pam_permit.so"
pamt mpin-other alice "$PIN"
check "the store copied to a host with another TPM: the right PIN gets no login" [ "$RC" -ne 0 ]
check "another TPM: the log says the record is not this TPM's" grep -q "does not belong to this host's TPM" <<<"$OUT"
check "another TPM: nothing was tried as a PIN there" [ "$(lockout_counter "$TCTI_B")" -eq 0 ]

# The online time moved forward (an attacker extending offline_max_age): the MAC fails.
cp -a "$REC" "$WORK/record.saved"
sed -i "s/^online .*/online $(date +%s)/" "$REC"
pamt mpin alice "$PIN"
check "a changed record: the right PIN gets no login" [ "$RC" -ne 0 ]
check "a changed record: the log says it fails its check" grep -q "fails its check" <<<"$OUT"
check_all "a changed record is removed" '[ -z "$(record)" ]'

# No TPM: none configured where one is expected, or none answering.
restart_server || exit 1
offline_config "$WORK/notpm.conf" "swtpm:host=127.0.0.1,port=$(free_port)"
service mpin-notpm "auth required $MODULE config=$WORK/notpm.conf" "account required pam_permit.so"
pamt mpin-notpm alice "$PIN"
check "no TPM: the online login still succeeds" [ "$RC" -eq 0 ]
check "no TPM: the log says no record was made, and why" grep -q "no record made for alice@example.org: no usable TPM" <<<"$OUT"
offline_config "$WORK/nodevice.conf" "device:$WORK/no-such-tpm"
service mpin-nodevice "auth required $MODULE config=$WORK/nodevice.conf" "account required pam_permit.so"
pamt mpin alice "$PIN"
check "online login with the TPM: a new record" [ -n "$(record)" ]
stop_server
for svc in mpin-notpm mpin-nodevice; do
  pamt "$svc" alice "$PIN"
  check "no TPM ($svc): offline refused" [ "$RC" -ne 0 ]
  check "no TPM ($svc): the log says no usable TPM" grep -q "offline: no usable TPM" <<<"$OUT"
done

# --- The backend stays the authority: revoked, blocked, delete, a new registration ------------
restart_server || exit 1
"$BIN/mpin-server" user revoke --data "$WORK/server" alice@example.org >/dev/null
pamt mpin alice "$PIN"
check "revoked: refused" [ "$RC" -ne 0 ]
check "revoked: the signed answer removed the offline record" grep -q "offline: record removed (revoked)" <<<"$OUT"
check_all "revoked: no record left" '[ -z "$(record)" ]'
stop_server
pamt mpin alice "$PIN"
check "revoked, then the backend down: no offline login" [ "$RC" -ne 0 ]

# dora: blocked after wrong PINs at the backend.
restart_server || exit 1
echo "$PIN" | ctl register dora --identity dora@example.org --pin-stdin >/dev/null 2>&1
pamt mpin dora "$PIN"
check "dora: online login with a record" grep -q "offline: record made for dora@example.org" <<<"$OUT"
for _ in $(seq 1 10); do
  pamt mpin dora "$WRONG"
  grep -q "outcome=BLOCKED" <<<"$OUT" && break
done
check "dora: blocked by the backend" grep -q "outcome=BLOCKED" <<<"$OUT"
check "blocked: the signed answer removed the offline record" grep -q "offline: record removed (blocked)" <<<"$OUT"

# erin: mpinctl delete, and a new registration.
echo "$PIN" | ctl register erin --identity erin@example.org --pin-stdin >/dev/null 2>&1
pamt mpin erin "$PIN"
check "erin: online login with a record" grep -q "offline: record made for erin@example.org" <<<"$OUT"
check_all "mpinctl show names erin's offline record" 'ctl show erin | grep -q "^offline: record of 20[0-9-]* [0-9:]* UTC$"'
ctl delete erin >/dev/null
check_all "mpinctl delete removed erin's offline record" '[ -z "$(record erin@example.org)" ]'
echo "$PIN" | ctl register erin --identity erin@example.org --pin-stdin >/dev/null 2>&1
pamt mpin erin "$PIN"
check "erin registered again: a new record" grep -q "offline: record made for erin@example.org" <<<"$OUT"

# --- The TPM's own dictionary-attack protection ------------------------------------------------
tpm2_dictionarylockout -T "$TCTI_A" -c >/dev/null
tpm2_dictionarylockout -T "$TCTI_A" -s -n 2 -t 600 -l 600 >/dev/null
offline_config "$WORK/many.conf" "$TCTI_A" "offline_attempts = 10"
sed -i '/^offline_attempts = 3$/d' "$WORK/many.conf"
service mpin-many "auth required $MODULE config=$WORK/many.conf" "account required pam_permit.so"
stop_server
pamt mpin-many erin "$WRONG"
pamt mpin-many erin "$WRONG"
check "the TPM counted two wrong PINs" [ "$(lockout_counter "$TCTI_A")" -eq 2 ]
check "the TPM is in dictionary-attack lockout" in_lockout "$TCTI_A"
pamt mpin-many erin "$PIN"
check "TPM lockout: even the right PIN gets no offline login" [ "$RC" -ne 0 ]
check "TPM lockout: the log says so" grep -q "dictionary-attack lockout" <<<"$OUT"
check "TPM lockout: the try was not counted by the host" [ "$(failures erin@example.org)" -eq 2 ]
tpm2_dictionarylockout -T "$TCTI_A" -c >/dev/null
pamt mpin-many erin "$PIN"
check "lockout cleared by the TPM's owner: the right PIN logs in offline" grep -q "mode=offline outcome=OK" <<<"$OUT"

# --- mpinctl doctor -----------------------------------------------------------------------------
DOCTOR=$(ctl doctor --pam-dir "$SERVICES" 2>&1)
check "doctor: offline logins on, with their limits" grep -q "^ok   offline: on: up to offline_max_age (7.0 days) .* 3 wrong offline PINs" <<<"$DOCTOR"
check "doctor: the TPM answers, with its dictionary-attack state" grep -q "^ok   tpm: $TCTI_A answers; dictionary-attack protection: [0-9]* of 2 wrong" <<<"$DOCTOR"
DOCTOR=$(LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/notpm.conf" doctor --pam-dir "$SERVICES" 2>&1)
check "doctor, no TPM: a FAIL line saying offline logins are off, and why" \
  grep -q "^FAIL offline: offline = yes, but no usable TPM: .* offline logins are off until a TPM answers" <<<"$DOCTOR"
DOCTOR=$(LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/nodevice.conf" doctor --pam-dir "$SERVICES" 2>&1)
check "doctor, no TPM device: the same" grep -q "^FAIL offline: offline = yes, but no usable TPM" <<<"$DOCTOR"
offline_config "$WORK/off.conf" "$TCTI_A" 
sed -i 's/^offline = yes$/offline = no/' "$WORK/off.conf"
DOCTOR=$(LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/off.conf" doctor --pam-dir "$SERVICES" 2>&1)
check "doctor, offline = no: says they are off" grep -q "^ok   offline: offline logins off (offline = no)" <<<"$DOCTOR"
tpm2_dictionarylockout -T "$TCTI_A" -s -n 1 -t 600 -l 600 >/dev/null
pamt mpin-many erin "$WRONG"
DOCTOR=$(ctl doctor --pam-dir "$SERVICES" 2>&1)
check "doctor: a TPM in lockout is a FAIL line" grep -q "^FAIL tpm: .*IN LOCKOUT" <<<"$DOCTOR"
tpm2_dictionarylockout -T "$TCTI_A" -c >/dev/null

# --- No secret in any log ----------------------------------------------------------------------
check "no PIN in any log line" bash -c '! grep -qE "$1|$2" "$3"' _ "$PIN" "$WRONG" "$ALL_OUTPUT"
check "no record field in any log line" bash -c '! grep -qF "$(sed -n "s/^private //p" "$1" | cut -c1-32)" "$2"' _ "$WORK/record.saved" "$ALL_OUTPUT"

summary
