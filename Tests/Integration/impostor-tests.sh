#!/usr/bin/env bash
# docs/SECURITY.md §6.1: whoever answers on the backend's address must not be believed. A local
# user who binds mpin-server's port while it is down (Tests/Integration/fake-backend.py: every
# step answered as for a right PIN, nothing signed) gets no login in token mode or in device
# mode, cannot make the host delete a token, and the real server, back on its port, logs the
# same users in again. Needs the release builds (make test-pam); pamtester + libpam-wrapper.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"

suite_setup

# Device mode: carol's device registers itself; the host links her with the registration's
# fingerprint, in a store and configuration of their own.
mkdir -m 700 "$WORK/devstore"
printf 'backend = %s\nstore = %s\ntimeout = 3\nmode = device\ndevice_timeout = 5\nverdict_key = %s\n' "$BACKEND" "$WORK/devstore" "$VERDICT_KEY" > "$WORK/device.conf"
service mpin-device "auth required $MODULE config=$WORK/device.conf" "account required pam_permit.so"
carol_device() { env -u XDG_DATA_HOME HOME="$WORK/home-carol" "$BIN/mpin" "$@"; }


echo 1234 | ctl register alice --identity alice@example.org --pin-stdin >/dev/null
check "alice is registered" [ "$?" -eq 0 ]
echo 4321 | carol_device register --backend "$BACKEND" --verdict-key "$VERDICT_KEY" --identity carol@example.org --pin-stdin >/dev/null
CAROL_FP=$(carol_device list --fingerprints | cut -f4)
"$BIN/mpinctl" --config "$WORK/device.conf" link carol --identity carol@example.org --registration "$CAROL_FP" >/dev/null
check "carol is linked for device mode" [ "$?" -eq 0 ]
check_all "the link pinned the server's verdict key" 'grep -q verdictKey "$WORK/devstore/state-accounts"'

pamt mpin alice 1234
check "the real server: alice's right PIN logs in" [ "$RC" -eq 0 ]
TOKENS_BEFORE=$(cat "$WORK/store/secure-"* 2>/dev/null | sha256sum)

# What the impostor needs is public: the client settings anyone may fetch.
python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
  "$BACKEND/rps/clientSettings" > "$WORK/settings.json"
stop_server

# impostor MODE: fake-backend.py on the real server's port, FAKE_PID set, its log in $WORK/fake.log.
impostor() {
  : > "$WORK/fake.log"
  python3 "$ROOT/Tests/Integration/fake-backend.py" "$PORT" "$WORK/fake.log" "$WORK/settings.json" carol@example.org "$1" &
  FAKE_PID=$!
  PIDS+=("$FAKE_PID")
  wait_port "$PORT" && return 0
  echo "the fake backend did not start"; return 1
}
stop_impostor() { kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; }

for mode in ok badsig; do
  impostor "$mode" || exit 1
  pamt mpin alice 1234
  check "impostor ($mode): alice's right PIN gets no login" [ "$RC" -ne 0 ]
  check "impostor ($mode): the login reached the final step" grep -q "POST /mpinAuthenticate" "$WORK/fake.log"
  check "impostor ($mode): the refusal is logged as an unsigned verdict" grep -q "not signed with the key pinned" <<<"$OUT"
  pamt mpin alice 9999
  check "impostor ($mode): a wrong PIN gets no login" [ "$RC" -ne 0 ]
  pamt mpin-device carol ""
  check "impostor ($mode): a device login nobody approved gets no login" [ "$RC" -ne 0 ]
  check "impostor ($mode): the device login reached the verdict" grep -q "POST /authenticate" "$WORK/fake.log"
  stop_impostor
done

impostor blocked || exit 1
pamt mpin alice 1234
check "impostor (blocked): no login" [ "$RC" -ne 0 ]
stop_impostor
check_all "impostor (blocked): alice's token is still in the store" \
  '[ "$(cat "$WORK/store/secure-"* 2>/dev/null | sha256sum)" = "$TOKENS_BEFORE" ]'

# docs/SECURITY.md §3: while the server restarts, the impostor answers one login with an
# unsigned "wrong PIN" and client settings that are marked (wrongpin), or whose URLs are on his
# own port (redirect; a second impostor listens there, from which he would relay the host's
# logins). The host follows no URL off the backend's origin and keeps none of those settings.
ELSEWHERE=$(free_port)
: > "$WORK/elsewhere.log"
python3 "$ROOT/Tests/Integration/fake-backend.py" "$ELSEWHERE" "$WORK/elsewhere.log" "$WORK/settings.json" carol@example.org ok &
ELSEWHERE_PID=$!
PIDS+=("$ELSEWHERE_PID")
for mode in wrongpin redirect; do
  FAKE_REDIRECT_PORT=$ELSEWHERE impostor "$mode" || exit 1
  pamt mpin alice 1234
  check "impostor ($mode): no login" [ "$RC" -ne 0 ]
  check "impostor ($mode): its unsigned wrong PIN is not believed" bash -c '! grep -q "outcome=INCORRECT_PIN" <<<"$1"' _ "$OUT"
  check_all "impostor ($mode): none of its client settings are kept" '! grep -qs heldPort "$WORK/store/"*settings-*'
  stop_impostor
done
check "impostor (redirect): the host sent nothing to the port its settings named" [ ! -s "$WORK/elsewhere.log" ]

# docs/SECURITY.md §3: an unsigned "revoked" (410 on the time permit) is not recorded.
impostor revoked || exit 1
pamt mpin alice 1234
check "impostor (revoked): no login" [ "$RC" -ne 0 ]
check "impostor (revoked): the login asked for the time permit" grep -q "GET /rps/timePermit/" "$WORK/fake.log"
stop_impostor
check_all "impostor (revoked): the store does not mark alice revoked" '! grep -q revoked "$WORK/store/state-accounts"'
check_all "impostor (revoked): mpinctl still shows her REGISTERED" 'ctl list | grep -q "^alice	.*	REGISTERED$"'

restart_server || exit 1
pamt mpin alice 1234
check "the real server back on its port: alice's right PIN logs in" [ "$RC" -eq 0 ]
for _ in 1 2; do pamt mpin alice 1234; done
check "and again, with the settings it kept" [ "$RC" -eq 0 ]
check "no login ever went to the port the impostor's settings named" [ ! -s "$WORK/elsewhere.log" ]
kill "$ELSEWHERE_PID" 2>/dev/null; wait "$ELSEWHERE_PID" 2>/dev/null

# docs/SECURITY.md §2: a relay between the host and the real server writes a
# waiting login's access number into pass 2's WID and takes the final step to the device
# endpoint. A token registered with mpinctl approves nothing but its host's login: pass 2 is
# refused, the access number stays unapproved.
RELAY_PORT=$(free_port)
: > "$WORK/relay.log"
python3 "$ROOT/Tests/Integration/wid-relay.py" "$RELAY_PORT" "$PORT" "$WORK/wid-code" "$WORK/relay.log" &
RELAY_PID=$!
PIDS+=("$RELAY_PID")
wait_port "$RELAY_PORT" || fail "the WID relay did not start"
mkdir -m 700 "$WORK/relaystore"
printf 'backend = http://127.0.0.1:%s\nstore = %s\ntimeout = 5\nverdict_key = %s\n' "$RELAY_PORT" "$WORK/relaystore" "$VERDICT_KEY" \
  > "$WORK/relay.conf"
echo 2468 | LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/relay.conf" register dora --identity dora@example.org --pin-stdin >/dev/null
check "dora is registered through the relay" [ "$?" -eq 0 ]
python3 - "$BACKEND" "$WORK/wid-code" "$WORK/webott" <<'PY'
import json, sys, urllib.request
r = urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/rps/getAccessNumber", method="POST",
    data=json.dumps({"description": "a login the relay's owner started"}).encode(), headers={"Content-Type": "application/json"}))
a = json.loads(r.read())
open(sys.argv[2], "w").write(a["accessNumber"])
open(sys.argv[3], "w").write(a["webOTT"])
PY
service mpin-relay "auth required $MODULE config=$WORK/relay.conf" "account required pam_permit.so"
pamt mpin-relay dora 2468
check "relay: the login reached pass 2 with the WID rewritten" grep -q "rewrote WID" "$WORK/relay.log"
check "relay: the server refuses pass 2 for a host registration" grep -q "POST /rps/pass2 -> 403" "$WORK/relay.log"
check "relay: the server's log says why" grep -q "a host registration names an access number" "$WORK/server.log"
sleep 1
POLL=$(python3 - "$BACKEND" "$WORK/webott" <<'PY'
import json, sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/rps/accessnumber", method="POST",
        data=json.dumps({"webOTT": open(sys.argv[2]).read()}).encode(), headers={"Content-Type": "application/json"}))
    print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
PY
)
check "relay: the waiting login was not approved (poll: $POLL)" [ "$POLL" != 200 ]
kill "$RELAY_PID" 2>/dev/null; wait "$RELAY_PID" 2>/dev/null

# docs/SECURITY.md §1: the first contact. Over plain http without the key read on the server,
# mpinctl register and link and mpin register pin nothing and register nothing.
NO_VERDICT_KEY=1 write_config "$WORK/nokey.conf" "$BACKEND"
echo 1234 | LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/nokey.conf" register erin --identity erin@example.org --pin-stdin \
  >"$WORK/nokey.out" 2>&1
check "register over plain http without --verdict-key: refused" [ "$?" -ne 0 ]
check "register without a key: the refusal names the fix" grep -q "give --verdict-key" "$WORK/nokey.out"
check_all "register without a key: nothing was registered" '! LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/nokey.conf" list | grep -q "^erin	"'
LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/nokey.conf" link erin --identity carol@example.org --registration "$CAROL_FP" \
  >"$WORK/nokey-link.out" 2>&1
check "link over plain http without --verdict-key: refused" [ "$?" -ne 0 ]
echo 4321 | env -u XDG_DATA_HOME HOME="$WORK/home-erin" "$BIN/mpin" register --backend "$BACKEND" --identity erin@example.org \
  --pin-stdin >"$WORK/nokey-mpin.out" 2>&1
check "mpin register over plain http without --verdict-key: refused" [ "$?" -ne 0 ]
check_all "mpin register without a key: nothing stored" '! env -u XDG_DATA_HOME HOME="$WORK/home-erin" "$BIN/mpin" list 2>/dev/null | grep -q erin'

# A store whose registration pins no key (made with a backend that does not sign, as a
# Milagro RPS): plain http is refused before the PIN is asked.
python3 - "$WORK/store/state-users" <<'PY'
import json, sys
p = sys.argv[1]
doc = json.load(open(p))
for backend in doc.values():
    for entry in backend.values():
        entry.pop("verdictKey", None)
json.dump(doc, open(p, "w"))
PY
pamt mpin alice 1234
check "no pinned key over plain http: refused" [ "$RC" -ne 0 ]
check "no pinned key over plain http: the PIN is not asked" bash -c '! grep -q "M-Pin PIN" <<<"$1"' _ "$OUT"
check "no pinned key over plain http: the log says why" grep -q "needs an https backend" <<<"$OUT"

# Registering with the server's key read out of band: a backend announcing another key is
# refused (what an impostor at registration time would announce), the real one accepted.
"$BIN/mpin-server" init --data "$WORK/other-server" --auto-activate >/dev/null
OTHER_KEY=$("$BIN/mpin-server" verdict-key --data "$WORK/other-server")
echo 1234 | ctl register alice2 --identity alice2@example.org --pin-stdin --verdict-key "$OTHER_KEY" >"$WORK/reg2.out" 2>&1
check "register --verdict-key: a backend announcing another key is refused" [ "$?" -ne 0 ]
check "register --verdict-key: the refusal says why" grep -q "announces another verdict key" "$WORK/reg2.out"
check_all "register --verdict-key: nothing was registered" '! ctl list | grep -q alice2'
# The same key from mpin.conf's verdict_key, when --verdict-key is not given.
cp "$WORK/mpin.conf" "$WORK/mpin.conf.saved"
sed -i "s/^verdict_key = .*/verdict_key = $OTHER_KEY/" "$WORK/mpin.conf"
echo 1234 | ctl register alice2 --identity alice2@example.org --pin-stdin >"$WORK/reg3.out" 2>&1
check "register with verdict_key in mpin.conf: a backend announcing another key is refused" [ "$?" -ne 0 ]
check "verdict_key in mpin.conf: the refusal names it" grep -q "or verdict_key in mpin.conf" "$WORK/reg3.out"
cp "$WORK/mpin.conf.saved" "$WORK/mpin.conf"
echo 1234 | ctl register alice2 --identity alice2@example.org --pin-stdin \
  --verdict-key "$("$BIN/mpin-server" verdict-key --data "$WORK/server")" >/dev/null 2>&1
check "register --verdict-key: the server's own key is accepted" [ "$?" -eq 0 ]

# The upgrade path: the admin reads the key on the server and pins it on the host.
ctl pin-key alice --verdict-key 0400 >/dev/null 2>&1
check "pin-key refuses what is not a key" [ "$?" -ne 0 ]
ctl pin-key alice --verdict-key "$("$BIN/mpin-server" verdict-key --data "$WORK/server")" >/dev/null
check "pin-key pins the server's key" [ "$?" -eq 0 ]
pamt mpin alice 1234
check "with the key pinned again, alice logs in over plain http" [ "$RC" -eq 0 ]

summary
