#!/usr/bin/env bash
# A user with no registration under `nouserok`, answered by pam_mpin.so itself or by its helper
# (DESIGN.md §2): the store's index, the verdict on the configuration, and every way either may
# be left untrustworthy. Through pamtester and libpam-wrapper (lib.sh); needs the release builds
# of pam_mpin, mpinctl and mpin-server (make test-pam).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"

# frank and frankie: users of the test name service with no registration.
NSS_USERS="${NSS_USERS:-} frank frankie"
pam_setup
start_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND"
service mpin "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"
echo 1234 | ctl register alice --identity alice@example.org --pin-stdin >/dev/null || fail "mpinctl registers alice"
service mpin-nouser "auth [success=done ignore=ignore default=die] $MODULE config=$WORK/mpin.conf nouserok" \
                    "auth required pam_permit.so" "account required pam_permit.so"

# docs/DESIGN.md §2: a user with no registration under `nouserok` is answered by the module
# itself, without the helper, when the store's index (state-accounts-index, which every write
# of `accounts` refreshes) proves it, the line is one the module models, and the store holds a
# verdict on the configuration file as it is now (state-config-verdict-*, written by what
# validated the file: mpinctl, the helper; DESIGN.md §2); on any doubt the helper decides, as
# before. The fast lines name a helper that does not exist: a call the module passes on fails
# (PAM_SERVICE_ERR), one it answers is PAM_IGNORE. They name the suite's store (the module looks
# for the verdict in the line's store, else in /var/lib/mpin; a later store= wins).
# pamtester gets the test name service too (the module resolves the user as the helper does).
ABSENT="$WORK/absent/mpin-pam-helper"
fast_service() {  # fast_service NAME CONFIG [ARGS...]
  local name=$1 conf=$2; shift 2
  service "$name" "auth [success=done ignore=ignore default=die] $PAM_SO helper=$ABSENT config=$conf store=$WORK/store $*" \
                  "auth required pam_permit.so" \
                  "account [success=done ignore=ignore default=die] $PAM_SO helper=$ABSENT config=$conf store=$WORK/store $*" \
                  "account required pam_permit.so"
}
# verdict_of CONF [STORE]: the file of the store's verdict on CONF (named by the FNV-1a checksum
# of the path, as ConfigVerdict names it).
verdict_of() {
  python3 -c 'import sys
h = 0xcbf29ce484222325
for b in sys.argv[1].encode():
    h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
print("%s/state-config-verdict-%016x" % (sys.argv[2], h))' "$1" "${2:-$WORK/store}"
}
# validate CONF: mpinctl reads CONF as root (and so leaves its verdict in the file's store).
validate() { LD_PRELOAD="${NSS_SO:-}" "$BIN/mpinctl" --config "$1" list >/dev/null 2>&1; }
# pamn SERVICE USER [authenticate|acct_mgmt]: pamtester with the module seeing the test users.
pamn() { PAM_PRELOAD="$NSS_SO" PAMT_CALL="${3:-authenticate}" pamt "$1" "$2" 1234; }
INDEX="$WORK/store/state-accounts-index"
fast_service fast "$WORK/mpin.conf" nouserok
check_all "mpinctl wrote the index of registered users, root's and 0600" \
  '[ -f "$INDEX" ] && [ "$(stat -c %u:%a "$INDEX")" = 0:600 ] && grep -qx alice "$INDEX"'
VERDICT=$(verdict_of "$WORK/mpin.conf")
check_all "mpinctl wrote its verdict on mpin.conf beside it, root's and 0600, with the file's bytes" \
  '[ -f "$VERDICT" ] && [ "$(stat -c %u:%a "$VERDICT")" = 0:600 ] && [ "$(tail -c "$(stat -c %s "$WORK/mpin.conf")" "$VERDICT" | md5sum)" = "$(md5sum < "$WORK/mpin.conf")" ]'
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
OUT=$(echo 1234 | MPIN_TEST_NSS_NOCASE=1 PAM_PRELOAD="$NSS_SO" PAM_DEBUGLEVEL=0 pam_env timeout 30 pamtester fast ALICE authenticate 2>&1); RC=$?
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
validate "$WORK/linked.conf"
fast_service fast-linked "$WORK/linked.conf" nouserok "store=$WORK/store-link"
pamn fast-linked frank
check "a store reached through a symbolic link is passed on" [ "$RC" -ne 0 ]
# Configurations whose answer for frank the module does not model, or that the helper refuses.
for extra in "require_group = wheel" "exempt_group = wheel" "mode = device" "enrol = yes" "timeout = 5" "no_such_key = 1" "prompt" "pin_length = 9"; do
  { grep -v '^timeout' "$WORK/mpin.conf"; echo "$extra"; } > "$WORK/extra.conf"
  [ "$extra" = "timeout = 5" ] && { cat "$WORK/mpin.conf"; echo "$extra"; } > "$WORK/extra.conf"
  validate "$WORK/extra.conf"
  fast_service fast-extra "$WORK/extra.conf" nouserok
  pamn fast-extra frank
  check "a configuration with \"$extra\" (${extra/ =*/} or an error) is passed on" [ "$RC" -ne 0 ]
done
{ cat "$WORK/mpin.conf"; echo "connect_timeout = 1.5"; echo "# a comment"; echo "enrol = no"; echo "mode = token"; } > "$WORK/extra.conf"
validate "$WORK/extra.conf"
pamn fast-extra frank
check "a configuration with only modelled keys is answered by the module" [ "$RC" -eq 0 ]
{ cat "$WORK/mpin.conf"; echo "mode = auto"; } > "$WORK/extra.conf"
validate "$WORK/extra.conf"
pamn fast-extra frank
check "mode = auto (token for a user the store does not name) is answered by the module" [ "$RC" -eq 0 ]
# verdict_key in its form is modelled (the suite's mpin.conf has one); one that is not is passed on.
{ grep -v '^verdict_key' "$WORK/mpin.conf"; echo "verdict_key = 04$(printf 'g%.0s' $(seq 128))"; } > "$WORK/extra.conf"
validate "$WORK/extra.conf"
pamn fast-extra frank
check "a verdict_key that is not 04 and 128 hex digits is passed on (the helper refuses the file)" [ "$RC" -ne 0 ]
cat "$WORK/mpin.conf" > "$WORK/extra.conf"
validate "$WORK/extra.conf"
chmod 664 "$WORK/extra.conf"; pamn fast-extra frank
check "a group-writable configuration is passed on" [ "$RC" -ne 0 ]
chmod 644 "$WORK/extra.conf"

# The verdict (state-config-verdict-*): the module holds no model of mpin.conf, only compares the
# file with the copy that mpinctl or the helper validated. A file changed after its verdict was
# written, in any way, is the helper's; so is a verdict the module cannot trust.
{ cat "$WORK/mpin.conf"; echo "enrol = no "; } > "$WORK/extra.conf"
validate "$WORK/extra.conf"
pamn fast-extra frank
check "(a configuration mpinctl validated: answered by the module)" [ "$RC" -eq 0 ]
SHAPE=$(stat -c %s:%u:%a "$WORK/extra.conf")
sed -i 's/^enrol = no $/enrol = yes/' "$WORK/extra.conf"
pamn fast-extra frank
check_all "mpin.conf changed after its verdict was written (enrol = yes, same size, owner and mode): the stale verdict is not used" \
  '[ "$RC" -ne 0 ] && [ "$(stat -c %s:%u:%a "$WORK/extra.conf")" = "$SHAPE" ]'
validate "$WORK/extra.conf"
pamn fast-extra frank
check_all "... nor once it is validated again (enrol = yes asks the helper): no verdict for it" '[ "$RC" -ne 0 ] && [ ! -e "$(verdict_of "$WORK/extra.conf")" ]'
sed -i 's/^enrol = yes$/enrol = no /' "$WORK/extra.conf"
pamn fast-extra frank
check "the file as it was, byte for byte, is still passed on once its verdict was removed" [ "$RC" -ne 0 ]
# The helper validates the file it reads as well: after one call through it, the module answers.
{ cat "$WORK/mpin.conf"; echo "# validated by the helper"; } > "$WORK/helper.conf"
service mpin-helperconf "auth [success=done ignore=ignore default=die] $MODULE config=$WORK/helper.conf nouserok" \
                        "auth required pam_permit.so" "account required pam_permit.so"
fast_service fast-helperconf "$WORK/helper.conf" nouserok
pamn fast-helperconf frank
check "a configuration nothing validated yet is passed on" [ "$RC" -ne 0 ]
pamn mpin-helperconf frank
check "the helper answers for it (PAM_IGNORE)" [ "$RC" -eq 0 ]
pamn fast-helperconf frank
check_all "... and leaves its verdict: the next call is the module's" '[ "$RC" -eq 0 ] && [ -f "$(verdict_of "$WORK/helper.conf")" ]'
# The verdict as an attacker might leave it: each is passed on to the helper.
pamn fast frank; check "(mpin.conf's verdict as mpinctl left it: answered by the module)" [ "$RC" -eq 0 ]
chown nobody "$VERDICT"; pamn fast frank; chown root "$VERDICT"
check "a verdict owned by another user is not believed" [ "$RC" -ne 0 ]
chmod 640 "$VERDICT"; pamn fast frank; chmod 600 "$VERDICT"
check "a verdict readable by its group is not believed" [ "$RC" -ne 0 ]
mv "$VERDICT" "$VERDICT.real" && ln -s "$VERDICT.real" "$VERDICT"; pamn fast frank; rm -f "$VERDICT"; mv "$VERDICT.real" "$VERDICT"
check "a symbolic link in place of the verdict is not followed" [ "$RC" -ne 0 ]
cp -p "$VERDICT" "$WORK/verdict.saved"
printf '#' >> "$VERDICT"; pamn fast frank; cp -p "$WORK/verdict.saved" "$VERDICT"
check "a verdict edited by hand (a byte added) is not believed" [ "$RC" -ne 0 ]
cp -p "$WORK/mpin.conf" "$WORK/mpin.conf2" && cp -p "$VERDICT" "$(verdict_of "$WORK/mpin.conf2")"
fast_service fast-lookalike "$WORK/mpin.conf2" nouserok
pamn fast-lookalike frank
check "mpin.conf's verdict copied to the name of a look-alike file's (same bytes) is not believed" [ "$RC" -ne 0 ]
ln -s "$WORK/mpin.conf" "$WORK/link.conf" && cp -p "$VERDICT" "$(verdict_of "$WORK/link.conf")"
fast_service fast-linkconf "$WORK/link.conf" nouserok
pamn fast-linkconf frank
check "a configuration reached through a symbolic link is not judged by the target's verdict" [ "$RC" -ne 0 ]
pamn fast frank; check "(mpin.conf's own verdict still answers)" [ "$RC" -eq 0 ]
fast_service fast-lineopt "$WORK/mpin.conf" nouserok require_group=wheel
pamn fast-lineopt frank
check "a group on the line is passed on" [ "$RC" -ne 0 ]

summary
