#!/usr/bin/env bash
# pam_mpin.so through pamtester and libpam-wrapper: a private PAM service directory, nothing in
# /etc changes. Needs the release builds of pam_mpin, mpinctl and mpin-server (make test-pam).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"

MODULE="$BIN/libpam_mpin.so"
SERVICES="$WORK/pam.d"
mkdir -p "$SERVICES" && mkdir -m 700 "$WORK/store"

start_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND"

service() { # NAME LINES...
  local name=$1; shift; printf '%s\n' "$@" > "$SERVICES/$name"
}
service mpin       "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"
service mpin-nouser "auth [success=done ignore=ignore default=die] $MODULE config=$WORK/mpin.conf nouserok" \
                    "auth required pam_permit.so" "account required pam_permit.so"
service mpin-strict "auth [success=done ignore=ignore default=die] $MODULE config=$WORK/mpin.conf" \
                    "auth required pam_permit.so" "account required pam_permit.so"
service mpin-first "auth required /usr/lib/x86_64-linux-gnu/pam_wrapper/pam_set_items.so" \
                   "auth required $MODULE config=$WORK/mpin.conf use_first_pass" "account required pam_permit.so"
service mpin-badconf "auth required $MODULE config=$WORK/missing.conf" "account required pam_permit.so"

# pamt SERVICE USER PIN: runs pamtester, output in $OUT, status in $RC.
pamt() {
  OUT=$(printf '%s\n' "$3" | LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$SERVICES" \
        PAM_WRAPPER_DEBUGLEVEL=2 pamtester "$1" "$2" authenticate 2>&1)
  RC=$?
  [ -n "${VERBOSE:-}" ] && echo "$OUT" >&2
}
ctl() { "$BIN/mpinctl" --config "$WORK/mpin.conf" "$@"; }

echo 1234 | ctl register alice --identity alice@example.org --pin-stdin >/dev/null
check "mpinctl registers alice" [ "$?" -eq 0 ]
echo 4321 | ctl register carol --identity carol@example.org --pin-stdin >/dev/null
check "mpinctl registers carol" [ "$?" -eq 0 ]

pamt mpin alice 1234
check "right PIN succeeds" [ "$RC" -eq 0 ]
check "the prompt is M-Pin PIN:" grep -q 'M-Pin PIN:' <<<"$OUT"
check "syslog line names user, identity and outcome" grep -q 'user=alice identity=alice@example.org outcome=OK' <<<"$OUT"
check "the PIN is not logged" bash -c '! grep -q 1234 <<<"$1"' _ "$OUT"

pamt mpin alice 1235
check "wrong PIN fails" [ "$RC" -ne 0 ]
check "wrong PIN tells the user" grep -q 'Wrong PIN.' <<<"$OUT"
check "wrong PIN is PAM_AUTH_ERR" grep -q 'Authentication failure' <<<"$OUT"

pamt mpin alice 1234
check "right PIN again succeeds (counter reset)" [ "$RC" -eq 0 ]

PAM_AUTHTOK=1234 pamt mpin-first alice ""
check "use_first_pass takes PAM_AUTHTOK" [ "$RC" -eq 0 ]
check "use_first_pass does not prompt" bash -c '! grep -q "M-Pin PIN:" <<<"$1"' _ "$OUT"

pamt mpin-strict bob 1234
check "unknown user is refused without nouserok" [ "$RC" -ne 0 ]
pamt mpin bob 1234
check "unknown user is PAM_USER_UNKNOWN" grep -q 'User not known' <<<"$OUT"
pamt mpin-nouser bob 1234
check "unknown user is ignored with nouserok" [ "$RC" -eq 0 ]

pamt mpin-badconf alice 1234
check "a missing config file is PAM_SERVICE_ERR" grep -qi 'module is unknown\|service module\|System error\|Authentication service cannot retrieve\|Error in service module' <<<"$OUT"

# A backend that accepts connections and never answers: the stopped server (the kernel still
# accepts into the listen backlog). The 3 s budget must cut the whole login.
kill -STOP "$SERVER_PID"
start=$(millis); pamt mpin alice 1234; took=$(( $(millis) - start ))
kill -CONT "$SERVER_PID"
check "a backend that never answers fails" [ "$RC" -ne 0 ]
check "a backend that never answers is PAM_AUTHINFO_UNAVAIL" grep -q 'Authentication service cannot retrieve authentication info' <<<"$OUT"
check "a backend that never answers is cut at the 3 s budget (${took} ms)" [ "$took" -ge 2500 ] && [ "$took" -lt 4500 ]

# Backend down: nothing listens on its port any more.
stop_server
start=$(millis); pamt mpin alice 1234; took=$(( $(millis) - start ))
check "backend down fails" [ "$RC" -ne 0 ]
check "backend down is PAM_AUTHINFO_UNAVAIL" grep -q 'Authentication service cannot retrieve authentication info' <<<"$OUT"
check "backend down answers at once (${took} ms)" [ "$took" -lt 2000 ]
restart_server || exit 1
pamt mpin alice 1234
check "after a server restart the registration still works" [ "$RC" -eq 0 ]

# Three wrong PINs block the identity; the right PIN no longer works.
for pin in 1111 2222; do pamt mpin carol $pin; done
check "second wrong PIN is still a plain failure" grep -q 'Wrong PIN.' <<<"$OUT"
pamt mpin carol 3333
check "third wrong PIN blocks" grep -q 'blocked' <<<"$OUT"
check "blocked is PAM_MAXTRIES" grep -q 'Have exhausted maximum number of retries' <<<"$OUT"
pamt mpin carol 4321
check "a blocked identity fails even with the right PIN" [ "$RC" -ne 0 ]
check "mpinctl shows carol BLOCKED" grep -q BLOCKED <<<"$(ctl show carol)"

# The store must stay private: a world-readable store is refused.
chmod 755 "$WORK/store"
pamt mpin alice 1234
check "an insecure store is refused" [ "$RC" -ne 0 ]
check "the refusal names the store" grep -q "$WORK/store" <<<"$OUT"
chmod 700 "$WORK/store"

check "the module links no libswift" bash -c '! ldd "$1" | grep -q libswift' _ "$MODULE"
check "the module exports only pam_sm_*" bash -c '[ "$(nm -D --defined-only "$1" | awk "\$2 ~ /[A-Z]/ {print \$3}" | grep -vc "^pam_sm_")" -eq 0 ]' _ "$MODULE"

summary
