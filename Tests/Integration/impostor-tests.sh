#!/usr/bin/env bash
# Issue 24, finding 1: whoever answers on the backend's address must not be believed. A local
# user who binds mpin-server's port while it is down (Tests/Integration/fake-backend.py: every
# step answered as for a right PIN, nothing signed) gets no login in token mode or in device
# mode, cannot make the host delete a token, and the real server, back on its port, logs the
# same users in again. Needs the release builds (make test-pam); pamtester + libpam-wrapper.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"

pam_setup
start_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND"
service mpin "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"

# Device mode: carol's device registers itself; the host links her with the registration's
# fingerprint, in a store and configuration of their own.
mkdir -m 700 "$WORK/devstore"
printf 'backend = %s\nstore = %s\ntimeout = 3\nmode = device\ndevice_timeout = 5\n' "$BACKEND" "$WORK/devstore" > "$WORK/device.conf"
service mpin-device "auth required $MODULE config=$WORK/device.conf" "account required pam_permit.so"
carol_device() { env -u XDG_DATA_HOME HOME="$WORK/home-carol" "$BIN/mpin" "$@"; }

pamt() {
  OUT=$(printf '%s\n' "$3" | LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$SERVICES" \
        PAM_WRAPPER_DEBUGLEVEL=2 timeout 30 pamtester "$1" "$2" authenticate 2>&1)
  RC=$?
  [ -n "${VERBOSE:-}" ] && echo "$OUT" >&2
}

echo 1234 | ctl register alice --identity alice@example.org --pin-stdin >/dev/null
check "alice is registered" [ "$?" -eq 0 ]
echo 4321 | carol_device register --backend "$BACKEND" --identity carol@example.org --pin-stdin >/dev/null
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
  for _ in $(seq 1 50); do (echo > "/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0; sleep 0.1; done
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

restart_server || exit 1
pamt mpin alice 1234
check "the real server back on its port: alice's right PIN logs in" [ "$RC" -eq 0 ]

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
check "no pinned key over plain http: the PIN is not asked" bash -c '! grep -q "M-Pin PIN:" <<<"$1"' _ "$OUT"
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
echo "verdict_key = $OTHER_KEY" >> "$WORK/mpin.conf"
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
