#!/usr/bin/env bash
# An admin's first week (docs/DESIGN.md §9): wrong PINs a PAM host's retries cannot waste, a
# blocked identity that the server's unblock brings back, a reused account name that inherits
# nothing, doctor's lines for each registration and for a stack that would lock root out, and
# an activation code that is refused at once. Through pamtester and libpam-wrapper against a real
# mpin-server on 127.0.0.1; the Unix users come from the test name service (lib.sh: nss_setup).
# Needs root and the release builds (make test-pam).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"

[ "$(id -u)" = 0 ] || { echo "recovery-tests.sh must run as root"; exit 1; }

NSS_USERS="fred greta" pam_setup
start_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND"
SRV() { "$BIN/mpin-server" "$@" --data "$WORK/server"; }

# pamt SERVICE USER ANSWER... (lib.sh): each answer typed at its prompt.
service mpin "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"
service mpin-silent "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"

echo 1234 | ctl register alice --identity alice@example.org --pin-stdin >/dev/null 2>&1
check "alice registers" [ $? -eq 0 ]
[ -n "${STOP_EARLY:-}" ] && { ls -la "$WORK/store"; pamt mpin alice 1111; echo "$OUT"; grep -i "attempt\|401\|authenticat" "$WORK/server.log" | tail -5; exit 0; }
check_all "the account keeps alice's uid" "grep -q '\"uid\":30001' '$WORK/store/state-accounts'"

# --- Attempts left: told every time, and the last one never spent by a caller's retry ------
pamt mpin alice 1111
check_all "a wrong PIN says how many attempts are left (2)" \
  '[ "$RC" -ne 0 ] && grep -q "Wrong PIN; 2 attempts left before this identity is blocked." <<<"$OUT"'
check_all "... the log line has attempts_left=2" 'grep -q "outcome=INCORRECT_PIN.*attempts_left=2" <<<"$OUT"'
pamt mpin alice 2222
check_all "the wrong PIN that leaves one says so" 'grep -q "Wrong PIN; 1 attempt left before this identity is blocked. Log in again" <<<"$OUT"'
check_all "... and ends the login with PAM_MAXTRIES (no retry of the caller spends the last one)" \
  'grep -q "attempts_left=1 (the login ends: the last attempt is kept)" <<<"$OUT" && grep -q "exhausted maximum number of retries" <<<"$OUT"'
check_all "the server still counts two wrong PINs, not three" \
  '[ "$(SRV user list --json | python3 -c "import json,sys; print([u for u in json.load(sys.stdin) if u[\"userId\"]==\"alice@example.org\"][0][\"failedAttempts\"])")" = 2 ]'
pamt mpin alice 1234
check_all "the next prompt says it is the last attempt (what sudo shows under PAM_SILENT)" \
  'grep -q "PIN (last attempt before the identity is blocked):" <<<"$OUT"'
check "... and the right PIN logs in" [ "$RC" -eq 0 ]
pamt mpin alice 1234
check_all "after a success the prompt is plain again" '[ "$RC" -eq 0 ] && ! grep -q "attempt" <<<"$OUT"'

# A count the server did not sign is not shown: a relay adds attemptsLeft=1 to a wrong PIN.
# The relay holds the backend's port while the server answers on another (as someone who held
# the port during a restart and forwards what he gets).
RELAY_PORT=$PORT
stop_server; PORT=$(free_port); restart_server
start_relay attempts || exit 1
pamt mpin alice 9999
check_all "relay: a rewritten count fails its signature and is not shown (plain 'Wrong PIN.', no PAM_MAXTRIES)" \
  'grep -q "rewrote attemptsLeft" "$WORK/relay.log" && grep -q "^Wrong PIN\.$" <<<"$OUT" && ! grep -q "attempt left\|exhausted maximum" <<<"$OUT"'
check_all "... and the next prompt does not claim a count either" \
  '! grep -q "\"attemptsLeft\"" "$WORK/store/state-accounts"'
stop_relay
stop_server; PORT=$RELAY_PORT; restart_server

# --- Blocked, then unblocked on the server: the same token works again ----------------------
pamt mpin alice 9998
check "the wrong PIN that leaves one ends the login" grep -q "1 attempt left" <<<"$OUT"
pamt mpin alice 9997
check_all "the last wrong PIN blocks the identity, and says so" \
  'grep -q "Your M-Pin identity is blocked; ask an administrator." <<<"$OUT" && grep -q "outcome=BLOCKED" <<<"$OUT"'
# kept_blocked_token: the store marks an identity BLOCKED and still holds its token.
kept_blocked_token() {
  python3 - "$WORK/store" <<'PY'
import json, sys
users = json.load(open(sys.argv[1] + "/state-users")); tokens = json.load(open(sys.argv[1] + "/secure-tokens"))
blocked = [m for b in users.values() for m, u in b.items() if u.get("state") == "BLOCKED"]
sys.exit(0 if blocked and all(m in tokens for m in blocked) else 1)
PY
}
check "the host keeps the token of a blocked host registration (marked BLOCKED)" kept_blocked_token
pamt mpin alice 1234
check_all "blocked: the prompt says so (sudo shows prompts only) and the right PIN is refused" \
  '[ "$RC" -ne 0 ] && grep -q "PIN (identity blocked: ask an administrator to unblock it):" <<<"$OUT" && grep -q "outcome=BLOCKED" <<<"$OUT"'
SRV user unblock alice@example.org >/dev/null 2>&1
check "mpin-server user unblock" [ $? -eq 0 ]
pamt mpin alice 1234
check_all "after the server's unblock the same token logs in with the right PIN (nothing re-registered)" \
  '[ "$RC" -eq 0 ] && grep -q "outcome=OK" <<<"$OUT"'
pamt mpin alice 1234
check_all "... and the host's mark is gone (plain prompt, OK)" '[ "$RC" -eq 0 ] && ! grep -q "blocked" <<<"$OUT"'

# --- The user changes the PIN (passwd through pam_mpin: pam_sm_chauthtok) -------------------
# pamc SERVICE USER ANSWER...: pamtester's chauthtok, as `passwd` would call it.
pamc() { PAMT_CALL=chauthtok pamt "$@"; }
# The line an admin puts before common-password in /etc/pam.d/passwd (README: "Change the PIN").
service mpin-passwd "password [success=done ignore=ignore default=die] $MODULE config=$WORK/mpin.conf" \
                    "password required pam_permit.so"
TOKEN_BEFORE=$(sha256sum "$WORK/store/secure-tokens")
pamc mpin-passwd alice 1234 5678 5679
check_all "PIN change: new PINs that differ change nothing" \
  '[ "$RC" -ne 0 ] && grep -q "The PINs do not match. Nothing changed." <<<"$OUT" && [ "$(sha256sum "$WORK/store/secure-tokens")" = "$TOKEN_BEFORE" ]'
pamc mpin-passwd alice 4321 5678 5678
check_all "PIN change: a wrong current PIN changes nothing and is counted (attempts left said)" \
  '[ "$RC" -ne 0 ] && grep -q "Wrong PIN; 2 attempts left" <<<"$OUT" && [ "$(sha256sum "$WORK/store/secure-tokens")" = "$TOKEN_BEFORE" ]'
pamc mpin-passwd alice 1234 56x8
check_all "PIN change: a new PIN of the wrong form is refused" '[ "$RC" -ne 0 ] && grep -q "The PIN must be" <<<"$OUT"'
pamc mpin-passwd alice 1234 5678 5678
check_all "PIN change: current PIN, new PIN twice: changed" \
  '[ "$RC" -eq 0 ] && grep -q "M-Pin PIN changed." <<<"$OUT" && grep -q "pin_change=OK" <<<"$OUT"'
check_all "... the PINs reach no log line" '! grep "SYSLOG" <<<"$OUT" | grep -q "5678\|1234"'
pamt mpin alice 1234
check_all "the old PIN no longer logs in (a wrong PIN for the server)" '[ "$RC" -ne 0 ] && grep -q "outcome=INCORRECT_PIN" <<<"$OUT"'
pamt mpin alice 5678
check_all "the new PIN logs in, with the same identity (nothing registered anew)" \
  '[ "$RC" -eq 0 ] && grep -q "identity=alice@example.org outcome=OK" <<<"$OUT"'
check_all "the server still has one identity for alice" \
  '[ "$(SRV user identities alice@example.org | wc -l)" = 1 ]'
pamc mpin-passwd carol 1111 2222 2222
check_all "PIN change for a user with no registration: pam_mpin steps aside (the next module changes the password)" \
  '[ "$RC" -eq 0 ] && ! grep -q "M-Pin" <<<"$OUT"'
stop_server
pamc mpin-passwd alice 5678 1357 1357
check_all "PIN change with the backend down: refused, the PIN stays" \
  '[ "$RC" -ne 0 ] && grep -q "cannot be reached" <<<"$OUT"'
restart_server
pamt mpin alice 5678
check "... and the PIN is still the new one" [ "$RC" -eq 0 ]
# alice's PIN is 5678 from here on.

# --- A forgotten PIN: blocked, then a registration code and a new PIN, the old identity gone ---
cp "$WORK/mpin.conf" "$WORK/mpin-enrol.conf"
printf 'enrol = yes\nenrol_identity = %%u@example.org\n' >> "$WORK/mpin-enrol.conf"
service mpin-enrol "auth required $MODULE config=$WORK/mpin-enrol.conf" "account required pam_permit.so"
echo 1111 | ctl register dora --identity dora@example.org --pin-stdin >/dev/null 2>&1
OLD_FP=$(SRV user identities dora@example.org | cut -f1)
pamt mpin-enrol dora 0001; pamt mpin-enrol dora 0002
pamt mpin-enrol dora 0003 ""
check_all "forgotten PIN: the blocking login offers enrolment; Enter without a code stops (blocked, nothing changed)" \
  '[ "$RC" -ne 0 ] && grep -q "Your M-Pin identity is blocked. With a registration code" <<<"$OUT" && grep -q "outcome=BLOCKED" <<<"$OUT" \
   && [ "$(SRV user identities dora@example.org | cut -f1)" = "$OLD_FP" ]'
CODE=$(SRV user invite dora@example.org)
pamt mpin-enrol dora 0004 "$CODE" 2580 2580
check_all "forgotten PIN: a registration code and a new PIN enrol again and log in, in the same conversation" \
  '[ "$RC" -eq 0 ] && grep -q "enrolment=ENROLLED" <<<"$OUT" && grep -q "outcome=OK" <<<"$OUT"'
check_all "... the old identity is gone on the server, one new one stands" \
  '[ "$(SRV user identities dora@example.org | wc -l)" = 1 ] && [ "$(SRV user identities dora@example.org | cut -f1)" != "$OLD_FP" ]'
check_all "... and the server says which identity the registration replaced" 'grep -q "deleted=true.*registration replaces an identity" "$WORK/server.log"'
pamt mpin dora 2580
check_all "the new PIN logs in (plain prompt: the old marks are gone)" '[ "$RC" -eq 0 ] && ! grep -q "blocked\|attempt" <<<"$OUT"'
# Attacker: a registration with a right code for dora that names alice's identity as the one it
# replaces deletes nothing of alice's (the code speaks for dora alone).
ALICE_MPINID=$(python3 -c 'import json,sys; print([m for b in json.load(open(sys.argv[1])).values() for m in b if b"alice@example.org" in bytes.fromhex(m)][0])' "$WORK/store/state-users")
ALICE_IDS=$(SRV user identities alice@example.org | cut -f1)
CODE=$(SRV user invite dora@example.org)
curl -s -o /dev/null -X PUT -H 'Content-Type: application/json' \
  --data "{\"userId\":\"dora@example.org\",\"mobile\":1,\"regCode\":\"$CODE\",\"scope\":\"host\",\"replaces\":\"$ALICE_MPINID\"}" "$BACKEND/rps/user"
check_all "attacker: replaces naming another user's identity deletes nothing of theirs" \
  '[ -n "$ALICE_IDS" ] && [ "$(SRV user identities alice@example.org | cut -f1)" = "$ALICE_IDS" ] && grep -q "deleted=false.*registration replaces an identity" "$WORK/server.log"'

# --- A reused account name inherits nothing ---------------------------------------------------
echo 2468 | ctl register fred --identity fred@example.org --pin-stdin >/dev/null 2>&1
check "fred registers" [ $? -eq 0 ]
pamt mpin fred 2468
check "fred logs in" [ "$RC" -eq 0 ]
# fred's account is deleted and the name given to a new account with another uid.
sed -i 's/^fred:x:\([0-9]*\):\([0-9]*\):/fred:x:31999:31999:/' "$MPIN_TEST_PASSWD"
pamt mpin fred 2468
check_all "a new account named fred (another uid) is not asked for fred's identity" \
  '[ "$RC" -ne 0 ] && grep -q "registration was made for uid" <<<"$OUT" && ! grep -q "outcome=OK" <<<"$OUT"'

# --- doctor: every registration -------------------------------------------------------------
echo 1357 | ctl register nobody-here --identity ghost@example.org --pin-stdin >/dev/null 2>&1
DOC=$(ctl doctor --pam-dir "$SERVICES" 2>&1)
[ -z "${VERBOSE:-}" ] || echo "$DOC" >&2
check_all "doctor: alice's registration is ok" 'grep -q "^ok   registration alice: alice@example.org on $BACKEND" <<<"$DOC"'
check_all "doctor: FAIL for the reused name, with the fix" \
  'grep -q "^FAIL registration fred: registered for uid [0-9]*, but fred is now uid 31999.*fix: mpinctl delete fred" <<<"$DOC"'
check_all "doctor: FAIL for an orphan registration" 'grep -q "^FAIL registration nobody-here: no Unix account nobody-here exists" <<<"$DOC"'
# Revoked on the server: the time permit's signed 410 says so, no PIN asked.
echo 1111 | ctl register greta --identity greta@example.org --pin-stdin >/dev/null 2>&1
SRV user revoke greta@example.org >/dev/null 2>&1
DOC=$(ctl doctor --pam-dir "$SERVICES" 2>&1)
check_all "doctor: FAIL for an identity the server revoked" \
  'grep -q "^FAIL registration greta: the server says greta@example.org is revoked" <<<"$DOC"'
# Blocked: three wrong PINs for greta2 would need a live identity; alice's block is shown instead.
for pin in 1 2; do pamt mpin alice 999$pin; done; pamt mpin alice 9993
DOC=$(ctl doctor --pam-dir "$SERVICES" 2>&1)
check_all "doctor: FAIL for a blocked identity, naming the server's unblock" \
  'grep -q "^FAIL registration alice: the identity alice@example.org is blocked.*mpin-server user unblock alice@example.org" <<<"$DOC"'
SRV user unblock alice@example.org >/dev/null 2>&1; pamt mpin alice 5678
# The account map edited by hand (as a careless restore would leave it): erin names alice's
# identity too, and carol an identity the store holds no token for.
cp "$WORK/store/state-accounts" "$WORK/accounts.saved"
python3 - "$WORK/store/state-accounts" <<'PY'
import json, sys
p = sys.argv[1]; doc = json.load(open(p))
doc["erin"] = dict(doc["alice"]); doc["erin"].pop("uid", None)
doc["carol"] = {"identity": "nobody@example.org", "backend": doc["alice"]["backend"]}
json.dump(doc, open(p, "w"))
PY
DOC=$(ctl doctor --pam-dir "$SERVICES" 2>&1)
check_all "doctor: FAIL when two Unix accounts use one identity" \
  'grep -q "^FAIL registration erin: another Unix account uses the same identity alice@example.org" <<<"$DOC"'
check_all "doctor: FAIL for a registration whose token is not in the store" \
  'grep -q "^FAIL registration carol: the store holds no token for nobody@example.org" <<<"$DOC"'
cp "$WORK/accounts.saved" "$WORK/store/state-accounts"; rm -f "$WORK/store/state-accounts-index"
# The backend now announces another verdict key (a rebuilt server on the same address).
stop_server
mv "$WORK/server" "$WORK/server.old"
"$BIN/mpin-server" init --data "$WORK/server" --auto-activate >/dev/null && restart_server
DOC=$(ctl doctor --pam-dir "$SERVICES" 2>&1)
check_all "doctor: FAIL when the backend announces another verdict key than the pinned one" \
  'grep -q "^FAIL registration alice: .*announces another verdict key" <<<"$DOC"'
stop_server
rm -rf "$WORK/server"; mv "$WORK/server.old" "$WORK/server"; restart_server
# A registration whose backend is no longer configured.
sed "s|^backend = .*|backend = http://127.0.0.1:9|" "$WORK/mpin.conf" > "$WORK/mpin-moved.conf"
DOC=$(LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/mpin-moved.conf" doctor --pam-dir "$SERVICES" 2>&1)
check_all "doctor: FAIL for a registration on a backend the configuration no longer names" \
  'grep -q "^FAIL registration alice: its backend $BACKEND is not in" <<<"$DOC"'

# --- doctor: a stack that would lock root out -----------------------------------------------
mkdir -p "$WORK/pam-lock"
printf 'auth [success=done authinfo_unavail=ignore ignore=ignore default=die] %s config=%s nouserok\nauth required pam_unix.so\n' \
  "$PAM_SO" "$WORK/mpin.conf" > "$WORK/pam-lock/su"
DOC=$(ctl doctor --pam-dir "$WORK/pam-lock" 2>&1)
check_all "doctor: FAIL lockout for root under nouserok without nouserok_root, with the fix" \
  'grep -q "^FAIL lockout: su: root has no registration and is refused.*fix: .*nouserok_root" <<<"$DOC"'
sed -i 's/nouserok$/nouserok nouserok_root require_group=mpin/' "$WORK/pam-lock/su"
DOC=$(ctl doctor --pam-dir "$WORK/pam-lock" 2>&1)
check_all "doctor: the packaged profile's arguments lock nobody out" '! grep -q "lockout\|fail-open" <<<"$DOC"'

# --- A wrong activation code is said at once ------------------------------------------------
stop_server
"$BIN/mpin-server" init --data "$WORK/server-code" >/dev/null
mv "$WORK/server" "$WORK/server.auto"; mv "$WORK/server-code" "$WORK/server"; restart_server
"$BIN/mpin-server" user add carol@example.org --data "$WORK/server" >/dev/null
write_config "$WORK/mpin-code.conf" "$BACKEND"
T0=$(date +%s)
ERR=$(echo 1234 | LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/mpin-code.conf" register carol --identity carol@example.org \
      --activation-code 000000000000 --pin-stdin 2>&1 >/dev/null); RC=$?
T1=$(date +%s)
[ -z "${VERBOSE:-}" ] || echo "$ERR" >&2
check_all "a wrong activation code fails at once (not after --wait), saying the code was not accepted" \
  '[ "$RC" -ne 0 ] && [ $((T1 - T0)) -lt 30 ] && grep -q "activation code" <<<"$ERR"'

[ -n "${KEEP:-}" ] && { echo "WORK=$WORK"; ls -la "$WORK/store"; sleep "$KEEP"; }
summary
