#!/usr/bin/env bash
# pam_mpin.so through pamtester and libpam-wrapper: a private PAM service directory, nothing in
# /etc changes. Needs the release builds of pam_mpin, mpinctl and mpin-server (make test-pam).
# The logins themselves: PINs, transports, the kept settings, the store, configurations refused,
# backends down or several, blocking and account management. TLS, users with no registration
# and the helper have suites of their own (pam-tls-tests.sh, pam-unregistered-tests.sh,
# pam-helper-tests.sh).
# README recipes covered here: "Register a user" (mpinctl register with --pin-stdin, the right
# and a wrong PIN, mpinctl delete), "Run mpin-server" (init --auto-activate and serve on
# 127.0.0.1, through lib.sh's start_server; two serve nodes on one data directory),
# "Troubleshooting" (the syslog line and its outcomes, the refusal of an open store) and
# "Security notes" (the PIN never logged, store and configuration refused, control characters
# masked).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"

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
hold_lock "$WORK/store/.lock"
t0=$(millis); pamt mpin alice 1234; took=$(( $(millis) - t0 ))
kill "$LOCK_PID" 2>/dev/null; wait "$LOCK_PID" 2>/dev/null
# Well under the store's 10 s wait even on a loaded machine; at least the 1 s given up.
check_all "a held store lock delays a login by at most ~1 s (${took} ms)" '[ "$RC" -eq 0 ] && [ "$took" -lt 5000 ] && [ "$took" -ge 900 ]'

pamt mpin-strict bob 1234
check "unknown user is refused without nouserok" [ "$RC" -ne 0 ]
pamt mpin bob 1234
check "unknown user is PAM_USER_UNKNOWN" grep -q 'User not known' <<<"$OUT"
pamt mpin-nouser bob 1234
check "unknown user is ignored with nouserok" [ "$RC" -eq 0 ]

# A config others can write could point the module at any server: refused (PAM_SERVICE_ERR).
cp "$WORK/mpin.conf" "$WORK/open.conf" && chmod 664 "$WORK/open.conf"
mkfifo "$WORK/fifo.conf"
service mpin-openconf "auth required $MODULE config=$WORK/open.conf" "account required pam_permit.so"
service mpin-fifoconf "auth required $MODULE config=$WORK/fifo.conf" "account required pam_permit.so"
pamt mpin-openconf alice 1234
check "a group-writable config is refused" [ "$RC" -ne 0 ]
check "... as a module error, with the reason in syslog" grep -q 'not writable by group or others' <<<"$OUT"
start=$(millis); PAMT_TIMEOUT=5 pamt mpin-fifoconf alice 1234; took=$(( $(millis) - start ))
check_all "a FIFO config is refused without blocking (${took} ms)" '[ "$RC" -ne 0 ] && [ "$took" -lt 5000 ]'

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
check_all "a backend that never answers costs connect_timeout (2 s), inside the 3 s budget (${took} ms, the helper's $(login_ms) ms)" \
  '[ "$took" -ge 1500 ] && [ "$(login_ms)" -lt 3500 ]'

# failmode=secure (pam_mpin(8), OPTIONS): the same backend down is a refusal, and says so.
service mpin-secure "auth required $MODULE config=$WORK/mpin.conf failmode=secure" "account required pam_permit.so"
kill -STOP "$SERVER_PID"
pamt mpin-secure alice 1234
kill -CONT "$SERVER_PID"
check_all "failmode=secure: a backend that never answers is PAM_AUTH_ERR, and the user is told" \
  '[ "$RC" -ne 0 ] && grep -q "Authentication failure" <<<"$OUT" && grep -q "this login is refused (failmode=secure)" <<<"$OUT"'

# Without TLS a SIGHUP has nothing to reload: logged, the server goes on.
kill -HUP "$SERVER_PID"
for _ in $(seq 100); do grep -q "no TLS certificate to reload" "$WORK/server.log" && break; sleep 0.1; done
pamt mpin alice 1234
check_all "a plain-HTTP server survives SIGHUP and logs it" '[ "$RC" -eq 0 ] && grep -q "no TLS certificate to reload" "$WORK/server.log"'

# Backend down: nothing listens on its port any more.
check "the server stops on SIGTERM within 10 s" stop_server
start=$(millis); pamt mpin alice 1234; took=$(( $(millis) - start ))
check "backend down fails" [ "$RC" -ne 0 ]
check "backend down is PAM_AUTHINFO_UNAVAIL" grep -q 'Authentication service cannot retrieve authentication info' <<<"$OUT"
check "backend down answers at once (${took} ms, the helper's $(login_ms) ms)" [ "$(login_ms)" -lt 2000 ]
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
check_all "two nodes: the first silent, the second serves within connect_timeout (1 s) plus a login (${took} ms, the helper's $(login_ms) ms)" \
  '[ "$RC" -eq 0 ] && [ "$took" -ge 900 ] && [ "$(login_ms)" -lt 2500 ]'
check "two nodes: debug says the login went on at the second node" \
  grep -q "backend node failed before the PIN proof; trying http://127.0.0.1:$PORT2" <<<"$OUT"
stop_server
start=$(millis); pamt mpin-nodes alice 1234; took=$(( $(millis) - start ))
check_all "two nodes: the first down, the second serves at once (${took} ms, the helper's $(login_ms) ms)" '[ "$RC" -eq 0 ] && [ "$(login_ms)" -lt 1500 ]'
pamt mpin-nodes alice 1235
check_all "two nodes: a wrong PIN on the second node is a wrong PIN, not a failover" \
  '[ "$RC" -ne 0 ] && grep -q "Wrong PIN." <<<"$OUT"'
kill "$NODE2_PID"; wait "$NODE2_PID" 2>/dev/null
start=$(millis); pamt mpin-nodes alice 1234; took=$(( $(millis) - start ))
check_all "two nodes: both down is PAM_AUTHINFO_UNAVAIL within the budget (${took} ms, the helper's $(login_ms) ms)" \
  '[ "$RC" -ne 0 ] && grep -q "Authentication service cannot retrieve authentication info" <<<"$OUT" && [ "$(login_ms)" -lt 3500 ]'
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
acct() { PAMT_CALL=acct_mgmt pamt mpin-account "$1"; }
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

summary
