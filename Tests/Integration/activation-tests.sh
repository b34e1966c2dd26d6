#!/usr/bin/env bash
# docs/SECURITY.md §6.2: `mpin-server user activate ID` activated every pending registration of
# ID, including one anybody on the network had started with `PUT /rps/user`. Here an attacker
# (from 127.0.0.2) starts a registration for alice while alice registers with mpinctl; the admin
# sees both (`user pending`), a bare `user activate` is refused, activation names alice's own by
# its fingerprint (which mpinctl shows her while it waits), the attacker's never becomes usable
# and cannot be kept alive by sending it again. Also the pass-1 store's bounds: a flood of pass 1s
# from one address is refused past its share and does not stop another user's login. Needs the
# release builds (make test-pam); pamtester + libpam-wrapper.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"

pam_setup
# Default verification (`code`): a registration without an activation code waits for the admin.
PORT=$(free_port)
"$BIN/mpin-server" init --data "$WORK/server" >/dev/null || exit 1
# Pass 1s live 10 minutes here, not 15 s: the flood below counts exactly the address's share of
# the pass-1 store, which entries expiring while a loaded machine sends it would free.
python3 - "$WORK/server/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["pass1ExpireSeconds"] = 600
json.dump(c, open(sys.argv[1], "w"))
PY
restart_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND"
service mpin "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"
admin() { "$BIN/mpin-server" user "$@" --data "$WORK/server"; }

# attacker ARGS: a client on 127.0.0.2 (another address than the host's); prints the JSON answer.
attacker() {
  python3 - "$PORT" "$@" <<'PY'
import http.client, json, socket, sys
port, method, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
body = sys.argv[4] if len(sys.argv) > 4 else None
c = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=("127.0.0.2", 0))
c.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
r = c.getresponse()
print(json.dumps({"status": r.status, "body": r.read().decode()}))
PY
}

EVIL=$(attacker PUT /rps/user '{"userId": "alice@example.org", "mobile": 1, "deviceName": "evil-laptop"}')
EVIL_ID=$(python3 -c 'import json,sys; print(json.loads(json.loads(sys.argv[1])["body"])["mpinId"])' "$EVIL")
EVIL_OTT=$(python3 -c 'import json,sys; print(json.loads(json.loads(sys.argv[1])["body"])["regOTT"])' "$EVIL")
check "the attacker starts a registration for alice" [ -n "$EVIL_ID" ]

echo 1234 | "$BIN/mpinctl" --config "$WORK/mpin.conf" register alice --identity alice@example.org --pin-stdin --wait 30 \
  >"$WORK/register.out" 2>&1 &
REG_PID=$!
PIDS+=("$REG_PID")
for _ in $(seq 1 100); do grep -q -- "--registration" "$WORK/register.out" && break; sleep 0.1; done
FP=$(sed -n 's/.*--registration \([0-9a-f]\{64\}\).*/\1/p' "$WORK/register.out")
check "mpinctl, waiting, shows alice her registration's fingerprint" [ -n "$FP" ]

PENDING=$(admin pending alice@example.org)
check_all "the admin sees both pending registrations" '[ "$(wc -l <<<"$PENDING")" -eq 2 ]'
check "the attacker's shows its device name and address" grep -q "device=evil-laptop	from=127.0.0.2" <<<"$PENDING"
check "alice's shows her fingerprint" grep -q "^$FP	" <<<"$PENDING"
EXPIRES=$(admin pending alice@example.org --json | python3 -c 'import json,sys; print(sorted(r["expires"] for r in json.load(sys.stdin)))')

admin activate alice@example.org >"$WORK/activate.out" 2>&1
check "a bare user activate is refused while registrations are pending" [ "$?" -ne 0 ]
check "the refusal says to name one with --registration" grep -q -- "--registration" "$WORK/activate.out"
admin activate alice@example.org --registration 0123 >/dev/null 2>&1
check "a fingerprint prefix shorter than 8 digits is refused" [ "$?" -ne 0 ]

# The attacker sends his registration again: it is not renewed.
sleep 1
attacker PUT "/rps/user/$EVIL_ID" "{\"userId\": \"alice@example.org\", \"mobile\": 1, \"regOTT\": \"$EVIL_OTT\"}" >/dev/null
AFTER=$(admin pending alice@example.org --json | python3 -c 'import json,sys; print(sorted(r["expires"] for r in json.load(sys.stdin)))')
check "sending a registration again does not extend it" [ "$EXPIRES" = "$AFTER" ]

admin activate alice@example.org --registration "${FP:0:16}" >/dev/null
check "the admin activates alice's registration by its fingerprint" [ "$?" -eq 0 ]
wait "$REG_PID"
check "alice's registration completes" grep -q "^REGISTERED alice as alice@example.org" "$WORK/register.out"

SHARE=$(attacker GET "/rps/signature/$EVIL_ID?regOTT=$EVIL_OTT")
check_all "the attacker's registration gets no client secret" '! grep -q "\"status\": 200" <<<"$SHARE"'
check_all "the attacker's registration is still pending, not active" \
  'admin pending alice@example.org | grep "from=127.0.0.2" | grep -vq ACTIVE'

pamt mpin alice 1234
check "alice logs in" [ "$RC" -eq 0 ]

# A flood of pass 1s for made-up identities from 127.0.0.2: refused (429) past the address's
# share of the pass-1 store, and alice, from 127.0.0.1, still logs in.
FLOOD=$(python3 - "$PORT" <<'PY'
import http.client, json, os, sys
port = int(sys.argv[1])
P = 0x2400000008702A0DB0BDDF647A6366D3243FD6EE18093EE1BE6623EF5C1B55B3
g1 = "04" + format(P - 1, "064x") + format(1, "064x")
c = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=("127.0.0.2", 0))
counts = {}
for i in range(1100):
    body = json.dumps({"pass": 1, "mpin_id": os.urandom(40).hex(), "U": g1, "UT": g1})
    c.request("POST", "/rps/pass1", body=body, headers={"Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    counts[r.status] = counts.get(r.status, 0) + 1
print(json.dumps(counts))
PY
)
check "the flood's first 1000 pass 1s are taken" grep -q '"200": 1000' <<<"$FLOOD"
check "past them the flooding address gets 429" grep -q '"429": 100' <<<"$FLOOD"
pamt mpin alice 1234
check "alice logs in during the flood" [ "$RC" -eq 0 ]

summary
