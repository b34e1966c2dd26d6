#!/usr/bin/env bash
# Self-enrolment at the first login (pam_mpin(8), OPTIONS). An administrator runs `mpin-server user
# invite IDENTITY`; with `enrol` on the pam.d line, a Unix user with no registration types that
# code and a new PIN twice, is registered into the root-owned store and logged in, in the same
# PAM conversation. Refusals: a wrong code, a code issued to someone else (three wrong codes
# void nothing: docs/SECURITY.md §5), repeated PINs that differ (the code is not used up), no way to
# know the server (no verdict_key over plain http: nobody is asked anything), a server that
# announces another verdict key (an impostor on the backend's address: nothing registered).
# README recipe "Let users enrol themselves" is covered here. Needs the release builds
# (make test-pam); pamtester + libpam-wrapper.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"

NSS_USERS="frank gina hugo" pam_setup
# Default verification (`code`): an enrolment must not wait for an administrator's activation.
PORT=$(free_port)
"$BIN/mpin-server" init --data "$WORK/server" >/dev/null || exit 1
restart_server || exit 1
KEY=$("$BIN/mpin-server" verdict-key --data "$WORK/server")
check "the server prints its verdict key" [ "${#KEY}" -eq 130 ]
write_config "$WORK/mpin.conf" "$BACKEND" "verdict_key = $KEY" "enrol_identity = %u@example.org"
service mpin-enrol "auth required $MODULE config=$WORK/mpin.conf enrol" "account required pam_permit.so"
service mpin "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"
admin() { "$BIN/mpin-server" user "$@" --data "$WORK/server"; }

registered() { ctl list | grep -q "^$1	$1@example.org	.*	REGISTERED"; }
unregistered() { ! registered "$1"; }

# Without `enrol`, an unregistered user is unknown and is asked nothing.
pamt mpin alice 1234
check "without enrol: refused as an unknown user" [ "$RC" -ne 0 ]
check "without enrol: no registration code is asked" bash -c '! grep -q "registration code" <<<"$1"' _ "$OUT"

# A made-up code: refused, nothing registered.
pamt mpin-enrol alice 123456789012 1234 1234
check "a made-up code is refused" [ "$RC" -ne 0 ]
check "the code is asked" grep -q "M-Pin registration code:" <<<"$OUT"
check "the log says CODE_REFUSED" grep -q "user=alice identity=alice@example.org enrolment=CODE_REFUSED" <<<"$OUT"
check "nothing is registered" unregistered alice

CODE=$(admin invite alice@example.org)
check "user invite prints a 12-digit code" grep -qE '^[0-9]{12}$' <<<"$CODE"

# The PINs differ: refused before the network, so the code is still good.
pamt mpin-enrol alice "$CODE" 1234 4321
check "PINs that differ are refused" [ "$RC" -ne 0 ]
check "the log says CANCELED" grep -q "enrolment=CANCELED" <<<"$OUT"
pamt mpin-enrol alice "$CODE" 12ab 12ab
check "a PIN that is not 4 digits is refused" [ "$RC" -ne 0 ]
check "the log says PIN_FORMAT" grep -q "enrolment=PIN_FORMAT" <<<"$OUT"

# The right code for another user's identity: refused, and alice's code stays.
pamt mpin-enrol carol "$CODE" 1234 1234
check "alice's code does not enrol carol" [ "$RC" -ne 0 ]
check "carol's log says CODE_REFUSED" grep -q "user=carol identity=carol@example.org enrolment=CODE_REFUSED" <<<"$OUT"
check "carol is not registered" unregistered carol

# A server that announces another verdict key (an impostor on the backend's address, here a
# configuration that pins another server's key): refused before the code is sent.
"$BIN/mpin-server" init --data "$WORK/other" >/dev/null
OTHER_KEY=$("$BIN/mpin-server" verdict-key --data "$WORK/other")
write_config "$WORK/other.conf" "$BACKEND" "verdict_key = $OTHER_KEY" "enrol_identity = %u@example.org"
service mpin-other "auth required $MODULE config=$WORK/other.conf enrol" "account required pam_permit.so"
pamt mpin-other alice "$CODE" 1234 1234
check "another verdict key: refused" [ "$RC" -ne 0 ]
check "the log says the server announces another verdict key" grep -q "announces another verdict key" <<<"$OUT"
check "alice is not registered by it" unregistered alice

# Plain http without verdict_key: nobody is asked anything.
NO_VERDICT_KEY=1 write_config "$WORK/open.conf" "$BACKEND" "enrol_identity = %u@example.org"
service mpin-open "auth required $MODULE config=$WORK/open.conf enrol" "account required pam_permit.so"
pamt mpin-open alice "$CODE" 1234 1234
check "no verdict_key over http: refused" [ "$RC" -ne 0 ]
check "no code is asked" bash -c '! grep -q "registration code" <<<"$1"' _ "$OUT"
check "the log says why" grep -q "ENROL_REFUSED (enrolment needs verdict_key" <<<"$OUT"

# The right code: alice is registered and logged in, in one conversation.
pamt mpin-enrol alice "$CODE" 1234 1234
check "alice enrols with her code and is logged in" [ "$RC" -eq 0 ]
check "the new PIN is asked twice" bash -c 'grep -q "New M-Pin PIN (exactly 4 digits):" <<<"$1" && grep -q "Repeat the new PIN:" <<<"$1"' _ "$OUT"
check "the log says ENROLLED, then the login OK" \
  bash -c 'grep -q "user=alice identity=alice@example.org enrolment=ENROLLED" <<<"$1" && grep -q "identity=alice@example.org enrolled outcome=OK" <<<"$1"' _ "$OUT"
check "the code, the PIN are not logged" bash -c '! grep -qE "$2|(^|[^0-9])1234([^0-9]|$)" <<<"$1"' _ "$OUT" "$CODE"
check "alice is registered in the store" registered alice

pamt mpin-enrol alice 1234
check "her next login asks the PIN only, and succeeds" [ "$RC" -eq 0 ]
check "no code is asked the second time" bash -c '! grep -q "registration code" <<<"$1"' _ "$OUT"
pamt mpin-enrol alice 9999
check "a wrong PIN is refused as usual" [ "$RC" -ne 0 ]

pamt mpin-enrol dora "$CODE" 5678 5678
check "a used code does not enrol anyone else" [ "$RC" -ne 0 ]

# Wrong codes for a user void nothing (docs/SECURITY.md §5): anyone can name erin; her invitation
# stays good.
CODE_E=$(admin invite erin@example.org)
for guess in 111111111111 222222222222 333333333333; do pamt mpin-enrol erin "$guess" 2468 2468; done
check "three wrong codes are refused" [ "$RC" -ne 0 ]
pamt mpin-enrol erin "$CODE_E" 2468 2468
check "after three wrong codes erin's own code still works" [ "$RC" -eq 0 ]

admin invite frank@example.org --ttl 5 >/dev/null 2>&1
check "an invitation shorter than a minute is refused" [ "$?" -ne 0 ]

summary
