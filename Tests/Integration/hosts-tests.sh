#!/usr/bin/env bash
# Who must pass M-Pin (pam_mpin(8), OPTIONS: require_group, exempt_group, nouserok,
# nouserok_root), callers that cannot prompt, and the PAM hosts a Linux login goes through.
#   1. The policy, through pam-conv-check (a PAM application of our own, libpam-wrapper, a
#      private PAM service directory): users put in groups by the test name service
#      (nss-shim.c, MPIN_TEST_GROUP), a look-alike group, a failing name service.
#   2. Callers that cannot prompt: no conversation, a failing one, one that fails prompts only
#      (as sudo -n's), PAM_SILENT with a working one; token mode and device mode; the order
#      and time of what reaches the conversation in device mode (number and QR code before
#      the module waits).
#   3. Real hosts: su and login (on a pseudo-terminal, with libpam-wrapper's private PAM
#      files), sudo -n (setuid: /etc/pam.d/sudo is replaced and restored) and sshd with
#      AuthenticationMethods publickey,keyboard-interactive. A throwaway Unix user is created
#      and removed. polkit's pkexec with its text agent on a private bus (see there for what
#      this machine lets it show).
# Needs root and the release builds of pam_mpin, mpin-pam-helper, mpinctl, mpin, mpin-server.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"

if [ "$(id -u)" != 0 ]; then echo "hosts tests need root"; echo "0 passed, 1 failed"; exit 1; fi
NSS_USERS="frank"
pam_setup
start_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND"

# The conversation harness.
tcc=$(command -v clang || command -v cc)
"$tcc" -O2 -o "$WORK/pam-conv-check" "$ROOT/Tests/Integration/pam-conv-check.c" -lpam 2>"$WORK/pcc.err" \
  || { cat "$WORK/pcc.err"; echo "0 passed, 1 failed"; exit 1; }
# conv SERVICE USER MODE [ANSWERS...] (options -s, -t TTY first): output and syslog lines (libpam-
# wrapper prints them on stderr) in $OUT, pam_authenticate's code in $CODE, its duration in $MS.
conv() {
  OUT=$(pam_env \
        timeout 60 "$WORK/pam-conv-check" "$@" 2>&1)
  CODE=$(sed -n 's/^rc=\([0-9]*\) t=.*/\1/p' <<<"$OUT")
  MS=$(sed -n 's/^rc=[0-9]* t=\([0-9]*\)$/\1/p' <<<"$OUT")
  [ -n "${VERBOSE:-}" ] && echo "$OUT" >&2
  return 0
}
PAM_SUCCESS=0 PAM_AUTH_ERR=7 PAM_AUTHINFO_UNAVAIL=9 PAM_USER_UNKNOWN=10 PAM_CONV_ERR=19

# --- 1. Enforcement policy -----------------------------------------------------------------
# Groups, from the test name service: carol is in the required group and in the exempt one;
# erin only in the exempt one; dora only in groups whose names look like them.
export MPIN_TEST_GROUP="$OTHERS/group"
cat > "$MPIN_TEST_GROUP" <<'GROUPS'
mpin-admins:x:40001:carol
mpin-exempt:x:40002:erin,carol
mpin-admins2:x:40003:dora
mpin-exempt-x:x:40004:dora
Mpin-exempt:x:40005:dora
GROUPS
chmod 644 "$MPIN_TEST_GROUP"
GHELPER="$NSS_DIR/helper-groups"
nss_wrap "$BIN/mpin-pam-helper" "$GHELPER" MPIN_TEST_GROUP="$MPIN_TEST_GROUP"
nss_wrap "$BIN/mpin-pam-helper" "$NSS_DIR/helper-nss-getgrnam" MPIN_TEST_GROUP="$MPIN_TEST_GROUP" MPIN_TEST_NSS_FAIL=getgrnam
nss_wrap "$BIN/mpin-pam-helper" "$NSS_DIR/helper-nss-grouplist" MPIN_TEST_GROUP="$MPIN_TEST_GROUP" MPIN_TEST_NSS_FAIL=getgrouplist
GMODULE="$PAM_SO helper=$GHELPER config=$WORK/mpin.conf"
# Each stack: the module's error ends it with its code; PAM_IGNORE goes on to pam_permit
# (so a skip is rc 0, and the log says which).
STACK="auth [success=done ignore=ignore default=die]"
POLICY="require_group=mpin-admins exempt_group=mpin-exempt"
service policy        "$STACK $GMODULE nouserok $POLICY" "auth required pam_permit.so"
service policy-strict "$STACK $GMODULE $POLICY" "auth required pam_permit.so"
service nouser        "$STACK $GMODULE nouserok" "auth required pam_permit.so"
service nouser-root   "$STACK $GMODULE nouserok nouserok_root" "auth required pam_permit.so"
service nss-getgrnam  "$STACK $PAM_SO helper=$NSS_DIR/helper-nss-getgrnam config=$WORK/mpin.conf nouserok $POLICY" "auth required pam_permit.so"
service nss-grouplist "$STACK $PAM_SO helper=$NSS_DIR/helper-nss-grouplist config=$WORK/mpin.conf nouserok $POLICY" "auth required pam_permit.so"
write_config "$WORK/mpin-groups.conf" "$BACKEND" "require_group = mpin-admins" "exempt_group = mpin-exempt"
service policy-conf   "$STACK $PAM_SO helper=$GHELPER config=$WORK/mpin-groups.conf nouserok" "auth required pam_permit.so"

for who in alice:1234 dora:2222 erin:5555; do
  printf '%s\n' "${who#*:}" | LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/mpin.conf" register "${who%:*}" \
    --identity "${who%:*}@example.org" --pin-stdin >/dev/null || fail "mpinctl registers ${who%:*}"
done

conv policy alice record 1234
check_all "policy: an ordinary registered user passes with the right PIN" '[ "$CODE" = 0 ] && grep -q "user=alice .*outcome=OK" <<<"$OUT"'
conv policy alice record 1111
check "policy: ... and is refused with a wrong one" [ "$CODE" = "$PAM_AUTH_ERR" ]
conv policy erin record
check_all "exempt_group: a member is skipped (PAM_IGNORE) without a prompt, one log line names the group" \
  '[ "$CODE" = 0 ] && ! grep -q "style=PROMPT" <<<"$OUT" && [ "$(grep -c "outcome=IGNORED" <<<"$OUT")" = 1 ] && grep -q "user=erin outcome=IGNORED (a member of exempt_group mpin-exempt" <<<"$OUT"'
conv policy carol record
check_all "require_group: a member without a registration is refused (PAM_AUTH_ERR) under nouserok, even in an exempt group" \
  '[ "$CODE" = "$PAM_AUTH_ERR" ] && grep -q "user=carol.*required group mpin-admins has no registration" <<<"$OUT"'
conv policy-conf carol record
check "require_group from mpin.conf: the same refusal" [ "$CODE" = "$PAM_AUTH_ERR" ]
conv policy-conf erin record
check "exempt_group from mpin.conf: the same skip" [ "$CODE" = 0 ]
conv policy dora record 1111
check_all "attacker: a member of look-alike groups (mpin-exempt-x, Mpin-exempt, mpin-admins2) is not exempt: asked, a wrong PIN refused" \
  '[ "$CODE" = "$PAM_AUTH_ERR" ] && grep -q "style=PROMPT_ECHO_OFF" <<<"$OUT" && ! grep -q "outcome=IGNORED" <<<"$OUT"'
conv policy frank record
check "nouserok: an unregistered user in no group is skipped" [ "$CODE" = 0 ]
# The packaged profile's line (pam/pam-auth-update/mpin: its `end` is `done` here) with its
# group: a member without a registration is refused before the password; everyone else, root
# included, goes on to the next module (here pam_permit, standing for pam_unix).
service profile "auth [success=done authinfo_unavail=ignore ignore=ignore default=die] $GMODULE nouserok nouserok_root require_group=mpin-admins" \
                "auth required pam_permit.so"
conv profile carol record
check_all "packaged profile: a member of the group without a registration is refused, unasked" \
  '[ "$CODE" = "$PAM_AUTH_ERR" ] && ! grep -q "style=PROMPT" <<<"$OUT"'
conv profile alice record 1234
check_all "packaged profile: a registered user is asked the PIN and logs in" '[ "$CODE" = 0 ] && grep -q "user=alice .*outcome=OK" <<<"$OUT"'
conv profile frank record
check "packaged profile: a non-member without a registration goes on to the next module" [ "$CODE" = 0 ]
conv profile root record
check_all "packaged profile: root without a registration goes on to the next module (no lockout)" \
  '[ "$CODE" = 0 ] && ! grep -q "style=PROMPT" <<<"$OUT"'
conv policy-strict frank record
check "without nouserok: the same user is PAM_USER_UNKNOWN" [ "$CODE" = "$PAM_USER_UNKNOWN" ]
conv nss-getgrnam erin record
check_all "attacker: a failing name service (getgrnam_r EIO) is PAM_AUTHINFO_UNAVAIL, not a skip" \
  '[ "$CODE" = "$PAM_AUTHINFO_UNAVAIL" ] && ! grep -q "outcome=IGNORED" <<<"$OUT" && grep -q "cannot be decided" <<<"$OUT"'
conv nss-grouplist erin record
check_all "attacker: a failing getgrouplist is PAM_AUTHINFO_UNAVAIL, not a skip" \
  '[ "$CODE" = "$PAM_AUTHINFO_UNAVAIL" ] && ! grep -q "outcome=IGNORED" <<<"$OUT"'
# A caller that is not root (a screen locker) cannot check a token: the module steps aside,
# except for a member of a required group, who is refused. The module, helper, test name
# service and harness are copied where nobody can reach them (a directory of root's in /run).
REACH=$(mktemp -d /run/mpin-hosts-it.XXXXXX) && chmod 755 "$REACH" || { echo "cannot make a directory in /run"; exit 1; }
trap 'rm -rf "$REACH"; cleanup' EXIT
cp "$PAM_SO" "$BIN/mpin-pam-helper" "$NSS_SO" "$WORK/pam-conv-check" "$REACH/" && chmod 755 "$REACH"/*
NSS_SO="$REACH/nss-shim.so" nss_wrap "$REACH/mpin-pam-helper" "$REACH/helper" MPIN_TEST_GROUP="$MPIN_TEST_GROUP"
mkdir -p "$OTHERS/pam.d" && chmod 755 "$OTHERS/pam.d"
cp "$WORK/mpin.conf" "$OTHERS/mpin.conf" && chmod 644 "$OTHERS/mpin.conf"
printf '%s\n' "$STACK $REACH/pam_mpin.so helper=$REACH/helper config=$OTHERS/mpin.conf nouserok $POLICY" \
  "auth required pam_permit.so" > "$OTHERS/pam.d/locker"
chmod 644 "$OTHERS/pam.d/locker"
as_nobody() {
  OUT=$(setpriv --reuid=nobody --regid=nogroup --clear-groups env LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 \
        PAM_WRAPPER_SERVICE_DIR="$OTHERS/pam.d" PAM_WRAPPER_DEBUGLEVEL=2 timeout 30 "$REACH/pam-conv-check" locker "$1" record 2>&1)
  CODE=$(sed -n 's/^rc=\([0-9]*\) t=.*/\1/p' <<<"$OUT")
  [ -n "${VERBOSE:-}" ] && echo "$OUT" >&2
  return 0
}
as_nobody carol
check_all "require_group: a caller that is not root cannot step aside for a required member (PAM_AUTH_ERR, logged)" \
  '[ "$CODE" = "$PAM_AUTH_ERR" ] && grep -q "user=carol outcome=AUTH_ERR (a member of require_group mpin-admins must pass M-Pin" <<<"$OUT"'
as_nobody alice
check_all "... an ordinary user still gets PAM_IGNORE there (the password decides)" \
  '[ "$CODE" = 0 ] && grep -q "user=alice outcome=IGNORED (the caller runs as uid" <<<"$OUT"'

conv nouser root record
check_all "nouserok does not let root through without a registration (PAM_USER_UNKNOWN)" \
  '[ "$CODE" = "$PAM_USER_UNKNOWN" ] && grep -q "nouserok does not cover root" <<<"$OUT"'
conv nouser-root root record
check "nouserok nouserok_root: root without a registration is skipped" [ "$CODE" = 0 ]
check "no PIN in any log line" bash -c '! grep -E "(1234|2222|5555)" <<<"$1" | grep -v "^msg\|^|"' _ "$OUT"

# --- 2. Callers that cannot prompt ---------------------------------------------------------
service token "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"
for mode in none fail noprompt; do
  conv token alice "$mode"
  check_all "token mode, conversation '$mode': PAM_CONV_ERR at once (${MS:-?} ms), logged" \
    '[ "$CODE" = "$PAM_CONV_ERR" ] && [ "${MS:-99999}" -lt 5000 ] && grep -q "outcome=CONV_ERR" <<<"$OUT"'
done
conv -s token alice record 1234
check_all "token mode, PAM_SILENT with a working conversation: the PIN is still asked and used" \
  '[ "$CODE" = 0 ] && grep -q "style=PROMPT_ECHO_OFF" <<<"$OUT"'
conv token alice record ""
check "token mode, an empty answer is not a conversation error (PAM_AUTH_ERR)" [ "$CODE" = "$PAM_AUTH_ERR" ]

# Device mode: alice's device (`mpin` with its own HOME) approves; the host holds only the link.
# A request may take 10 s (timeout): the machine running the suites may be busy.
mkdir -m 700 "$WORK/devstore"
DEVHOME="$WORK/devhome"; mkdir -p "$DEVHOME"
mpin_dev() { env -u XDG_DATA_HOME HOME="$DEVHOME" "$BIN/mpin" "$@"; }
printf 'backend = %s\nstore = %s\ntimeout = 10\nmode = device\ndevice_timeout = 15\nverdict_key = %s\n' "$BACKEND" "$WORK/devstore" "$VERDICT_KEY" > "$WORK/device.conf"
echo 1357 | mpin_dev register --backend "$BACKEND" --verdict-key "$VERDICT_KEY" --identity alice-dev@example.org --pin-stdin >/dev/null
FP=$(mpin_dev list --fingerprints | cut -f4)
LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/device.conf" link alice --identity alice-dev@example.org --registration "$FP" >/dev/null
check "device mode: alice's device registered, the host linked" [ "$?" -eq 0 ]
service device       "auth required $MODULE config=$WORK/device.conf" "account required pam_permit.so"
service device-debug "auth required $MODULE config=$WORK/device.conf debug" "account required pam_permit.so"

# conv_bg ARGS...: conv in the background, its output in $WORK/bg.out; sets BG_PID.
conv_bg() {
  in_background "$WORK/bg.out" env LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$SERVICES" \
    PAM_WRAPPER_DEBUGLEVEL=4 timeout 60 "$WORK/pam-conv-check" "$@"
}
# wait_for PATTERN: the first match of PATTERN's group in $WORK/bg.out, within 30 s.
wait_for() { first_match "s/$1/\\1/p" "$WORK/bg.out"; }
bg_finish() { wait "$BG_PID"; OUT=$(cat "$WORK/bg.out"); CODE=$(sed -n 's/^rc=\([0-9]*\) t=.*/\1/p' <<<"$OUT"); [ -n "${VERBOSE:-}" ] && echo "$OUT" >&2; }

# The order and timing a greeter or lock screen would see: QR code and number reach the
# conversation, then the module waits; the test approves only after it has seen the number,
# and the login is still waiting two seconds later.
conv_bg -t /dev/pts/0 device alice record
N=$(wait_for '.*mpin approve \([0-9]\{7\}\).*')
sleep 2
STILL=$(kill -0 "$BG_PID" 2>/dev/null && echo waiting)
[ -n "$N" ] && echo 1357 | mpin_dev approve "$N" --pin-stdin >>"$WORK/approve.log" 2>&1
bg_finish
check_all "device mode, recorded conversation: QR code and number arrive before the wait, then approval succeeds" \
  '[ -n "$N" ] && [ "$STILL" = waiting ] && [ "$CODE" = 0 ] && grep -q "█" <<<"$OUT" && ! grep -q "style=PROMPT" <<<"$OUT"'
# Every message's line comes before the result line, the QR code before the number.
QR_LINE=$(grep -n "█" <<<"$OUT" | head -1 | cut -d: -f1)
NUM_LINE=$(grep -n "mpin approve" <<<"$OUT" | head -1 | cut -d: -f1)
RC_LINE=$(grep -n "^rc=" <<<"$OUT" | cut -d: -f1)
check_all "device mode: message order QR code < number < result" '[ "${QR_LINE:-0}" -lt "${NUM_LINE:-0}" ] && [ "${NUM_LINE:-0}" -lt "${RC_LINE:-0}" ]'

# Headless, sudo -n's way (PAM_SILENT, no terminal, prompts fail): the number comes once as an
# error message, no prompt (sudo -n fails a login whose module prompted), and the module waits.
conv_bg -s device alice noprompt
N=$(wait_for '.*mpin approve \([0-9]\{7\}\).*')
[ -n "$N" ] && echo 1357 | mpin_dev approve "$N" --pin-stdin >>"$WORK/approve.log" 2>&1
bg_finish
check_all "device mode, PAM_SILENT without a terminal (as sudo -n): the number as ERROR_MSG, no prompt, approved" \
  '[ -n "$N" ] && [ "$CODE" = 0 ] && grep -q "style=ERROR_MSG" <<<"$OUT" && ! grep -q "style=PROMPT" <<<"$OUT"'
# A remote login whose conversation fails the "Press Enter" prompt: the number follows as an
# error message and the wait goes on.
conv_bg -r 192.0.2.7 -t ssh device alice noprompt
N=$(wait_for '.*mpin approve \([0-9]\{7\}\).*')
[ -n "$N" ] && echo 1357 | mpin_dev approve "$N" --pin-stdin >>"$WORK/approve.log" 2>&1
bg_finish
check_all "device mode, remote, the prompt fails: the number again as ERROR_MSG, approved" \
  '[ -n "$N" ] && [ "$CODE" = 0 ] && grep -q "style=PROMPT_ECHO_ON" <<<"$OUT" && grep -q "style=ERROR_MSG" <<<"$OUT"'

# No conversation at all: nothing can be shown; the module still waits for an approval (the
# test reads the number from the `debug` log) instead of failing at once.
conv_bg device-debug alice none
N=$(wait_for '.*access number \([0-9]\{7\}\) issued.*')
[ -n "$N" ] && echo 1357 | mpin_dev approve "$N" --pin-stdin >>"$WORK/approve.log" 2>&1
bg_finish
check_all "device mode, no conversation: the module waits and takes the approval (PAM_SUCCESS)" '[ -n "$N" ] && [ "$CODE" = 0 ]'

# --- 3. Real hosts ---------------------------------------------------------------------------
host_test_user mpinh
useradd -m -s /bin/sh "$TESTUSER" || { echo "useradd failed"; exit 1; }
echo 2468 | "$BIN/mpinctl" --config "$WORK/mpin.conf" register "$TESTUSER" --identity "$TESTUSER@example.org" --pin-stdin >/dev/null
check "the throwaway user is registered" [ "$?" -eq 0 ]
HOSTLINE="$MODULE_LINE config=$WORK/mpin.conf"
# su -l (PAM service su-l): a login shell's clean environment, without libpam-wrapper's variables.
service su-l  "auth required $HOSTLINE" "account required pam_permit.so" "session required pam_permit.so"
service login "auth required $HOSTLINE" "account required pam_permit.so" "session required pam_permit.so"

# on_pty EXPECTED PIN COMMAND...: runs COMMAND (as root, with libpam-wrapper's private PAM files)
# on a pseudo-terminal, answers "M-Pin PIN: " with PIN; prints in|denied|noprompt|error.
on_pty() {
  PAM_DEBUGLEVEL=0 pam_env python3 - "$@" <<'PY'
import pexpect, sys
expected, pin, command = sys.argv[1], sys.argv[2], sys.argv[3:]
c = pexpect.spawn(command[0], command[1:], timeout=20, encoding="utf-8")
try:
    if c.expect([r"M-Pin PIN[^:\n]*: ", pexpect.EOF]) == 1:
        print("noprompt"); sys.exit()
    c.sendline(pin)
    i = c.expect([r"\$ ", "ran-as-" + expected, "incorrect|failure|denied", pexpect.EOF, pexpect.TIMEOUT])
    if i == 0:
        c.sendline("echo ran-as-$(id -un); exit")
        i = 1 if c.expect(["ran-as-" + expected, pexpect.EOF, pexpect.TIMEOUT]) == 0 else 4
    print(["in", "in", "denied", "error", "error"][i])
except pexpect.exceptions.ExceptionPexpect:
    print("error")
finally:
    c.close(force=True)
PY
}
check "su: the right PIN runs a command as the user" [ "$(on_pty "$TESTUSER" 2468 su -l "$TESTUSER" -c 'echo ran-as-$(id -un)')" = in ]
check "su: a wrong PIN is refused" [ "$(on_pty "$TESTUSER" 1111 su -l "$TESTUSER" -c 'echo ran-as-$(id -un)')" = denied ]
check "login on a pseudo-terminal: the right PIN opens a shell as the user" [ "$(on_pty "$TESTUSER" 2468 login "$TESTUSER")" = in ]
check "login on a pseudo-terminal: a wrong PIN is refused" [ "$(on_pty "$TESTUSER" 1111 login "$TESTUSER")" = denied ]

# sudo -n: setuid, so /etc/pam.d/sudo itself (restored at exit). sudoers' noninteractive_auth
# makes sudo -n call PAM at all; its conversation then fails every prompt.
save_sudo_pam
printf 'Defaults:%s passwd_tries=1, noninteractive_auth\n%s ALL=(root) /usr/bin/id\n' "$TESTUSER" "$TESTUSER" > "/etc/sudoers.d/$TESTUSER"
chmod 440 "/etc/sudoers.d/$TESTUSER"
sudo_pam() { printf 'auth required %s config=%s\n@include common-account\n@include common-session-noninteractive\n' "$MODULE_LINE" "$1" > /etc/pam.d/sudo; }
sudo_pam "$WORK/mpin.conf"
T0=$(millis)
SUDO_OUT=$(runuser -u "$TESTUSER" -- timeout 30 sudo -n -k /usr/bin/id -un 2>"$WORK/sudo.err" </dev/null); SUDO_RC=$?
T1=$(millis)
[ -n "${VERBOSE:-}" ] && { echo "--- sudo -n (token) said:"; cat "$WORK/sudo.err"; } >&2
check_all "sudo -n, token mode: refused at once ($((T1 - T0)) ms), not as a wrong PIN" \
  '[ "$SUDO_RC" -ne 0 ] && [ -z "$SUDO_OUT" ] && [ $((T1 - T0)) -lt 8000 ] && ! grep -q "incorrect password attempt" "$WORK/sudo.err"'

# sudo -n in device mode: the number reaches sudo's stderr, the device approves, id runs.
printf 'backend = %s\nstore = %s\ntimeout = 10\nmode = device\ndevice_timeout = 15\nverdict_key = %s\n' "$BACKEND" "$WORK/devstore" "$VERDICT_KEY" > "$WORK/device-host.conf"
"$BIN/mpinctl" --config "$WORK/device-host.conf" link "$TESTUSER" --identity alice-dev@example.org --registration "$FP" >/dev/null
sudo_pam "$WORK/device-host.conf"
: > "$WORK/sudo-dev.err"
runuser -u "$TESTUSER" -- timeout 30 sudo -n -k /usr/bin/id -un >"$WORK/sudo-dev.out" 2>"$WORK/sudo-dev.err" </dev/null &
SUDO_PID=$!
N=$(first_match 's/.*mpin approve \([0-9]\{7\}\).*/\1/p' "$WORK/sudo-dev.err")
[ -n "$N" ] && echo 1357 | mpin_dev approve "$N" --pin-stdin >>"$WORK/approve.log" 2>&1
wait "$SUDO_PID"; SUDO_RC=$?
[ -n "${VERBOSE:-}" ] && { echo "--- sudo -n (device) said (N=$N rc=$SUDO_RC):"; cat "$WORK/sudo-dev.err" "$WORK/sudo-dev.out"; } >&2
check_all "sudo -n, device mode: the number on stderr, approved on the device, the command runs as root" \
  '[ -n "$N" ] && [ "$SUDO_RC" -eq 0 ] && [ "$(cat "$WORK/sudo-dev.out")" = root ]'
restore_sudo_pam
if [ -n "${ORIGINAL_SUDO_PAM:-}" ]; then
  check "sudo's PAM file is restored" [ "$(sha256sum < /etc/pam.d/sudo)" = "$ORIGINAL_SUDO_PAM" ]
fi

# sshd with the usual hardening: a key, then the PIN (AuthenticationMethods
# publickey,keyboard-interactive).
ssh-keygen -q -t ed25519 -N '' -f "$WORK/userkey" && ssh-keygen -q -t ed25519 -N '' -f "$WORK/otherkey"
install -d -m 700 -o "$TESTUSER" "/home/$TESTUSER/.ssh"
install -m 600 -o "$TESTUSER" "$WORK/userkey.pub" "/home/$TESTUSER/.ssh/authorized_keys"
mkdir -p "$WORK/sshpam"
printf 'auth required %s\naccount required pam_permit.so\nsession required pam_permit.so\n' "$HOSTLINE" > "$WORK/sshpam/sshd"
SSH_PORT=$(free_port)
SSHD_AUTH_METHODS="publickey,keyboard-interactive" start_sshd "$SSH_PORT" "$WORK/sshpam" sshd-key
# ssh_key KEY PIN: prints in|denied|noprompt|error.
ssh_key() {
  python3 - "$SSH_PORT" "$TESTUSER" "$1" "$2" <<'PY'
import pexpect, sys
port, user, key, pin = sys.argv[1:5]
c = pexpect.spawn("ssh", ["-p", port, "-i", key, "-o", "IdentitiesOnly=yes", "-o", "StrictHostKeyChecking=no",
                          "-o", "UserKnownHostsFile=/dev/null", "-o", "NumberOfPasswordPrompts=1", "-o", "BatchMode=no",
                          "-o", "LogLevel=ERROR", f"{user}@127.0.0.1", "echo", "ran-as-$(id -un)"], timeout=30, encoding="utf-8")
try:
    if c.expect([r"M-Pin PIN[^:\n]*: ", "Permission denied", pexpect.EOF]) != 0:
        print("noprompt"); sys.exit()
    c.sendline(pin)
    print(["in", "denied", "error"][c.expect([f"ran-as-{user}", "Permission denied", pexpect.EOF])])
except pexpect.exceptions.ExceptionPexpect:
    print("error")
PY
}
check "sshd publickey,keyboard-interactive: key and right PIN log in" [ "$(ssh_key "$WORK/userkey" 2468)" = in ]
check "... sshd logged keyboard-interactive/pam as the method that completed the login" \
  grep -q "Accepted keyboard-interactive/pam for $TESTUSER" "$WORK/sshd-key.log"
check "... key and a wrong PIN are refused" [ "$(ssh_key "$WORK/userkey" 1111)" = denied ]
check "... a key that is not authorised never reaches the PIN prompt" [ "$(ssh_key "$WORK/otherkey" 2468)" = noprompt ]

# polkit's pkexec with its text agent (pkttyagent), on a system bus and polkitd of the test's
# own: in a private mount namespace, /run/dbus is a fresh tmpfs (pkexec and polkit-agent-helper-1
# are setuid and ignore DBUS_SYSTEM_BUS_ADDRESS, so the bus must be at the standard path) and
# polkit's PAM file, /usr/lib/pam.d/polkit-1, is the test's (bind mount; nothing changes outside
# the namespace). Debian's polkit asks a member of group sudo, so the user joins it.
# What this machine allows: polkit-agent-helper-1 runs the PAM stack with our module and, when it
# succeeds, reports to polkitd, which here (no systemd-logind) answers "No session for cookie"
# even with pam_permit in place of the module; so the test shows the module's prompt and verdict
# inside pkexec, and counts a run of the command as root as success too.
if command -v pkexec >/dev/null && [ -x /usr/lib/polkit-1/polkitd ] && [ -f /usr/lib/pam.d/polkit-1 ] \
   && command -v unshare >/dev/null && command -v dbus-daemon >/dev/null; then
  usermod -aG sudo "$TESTUSER"
  printf 'auth required %s\naccount required pam_permit.so\nsession required pam_permit.so\n' "$HOSTLINE" > "$WORK/polkit-1.pam"
  # pkexec_as PIN: prints accepted|refused|noprompt|error.
  pkexec_as() {
    unshare -m --propagation private bash -c '
      mount -t tmpfs tmpfs /run/dbus && mount --bind "$1/polkit-1.pam" /usr/lib/pam.d/polkit-1 || { echo error; exit; }
      dbus-daemon --system --fork >/dev/null 2>&1 || { echo error; exit; }
      /usr/lib/polkit-1/polkitd --no-debug >/dev/null 2>&1 &
      pk=$!
      for _ in $(seq 1 50); do dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \
        string:org.freedesktop.PolicyKit1 2>/dev/null | grep -q true && break; sleep 0.1; done
      runuser -u "$2" -- python3 - "$3" <<PY
import pexpect, sys
c = pexpect.spawn("pkexec", ["/usr/bin/id", "-un"], timeout=20, encoding="utf-8")
try:
    if c.expect([r"M-Pin PIN[^:\n]*: ", pexpect.EOF]) != 0:
        print("noprompt"); sys.exit()
    c.sendline(sys.argv[1])
    c.expect(pexpect.EOF)
    out = c.before
    if "error response to PolicyKit daemon" in out or out.strip().endswith("root"):
        print("accepted")
    elif "AUTHENTICATION FAILED" in out:
        print("refused")
    else:
        print("error")
except pexpect.exceptions.ExceptionPexpect:
    print("error")
PY
      kill $pk 2>/dev/null; kill $(cat /run/dbus/pid 2>/dev/null) 2>/dev/null
    ' _ "$WORK" "$TESTUSER" "$1"
  }
  check "pkexec (text agent): the M-Pin prompt, and the right PIN passes polkit's PAM stack" [ "$(pkexec_as 2468)" = accepted ]
  check "pkexec (text agent): a wrong PIN fails polkit's PAM stack" [ "$(pkexec_as 1111)" = refused ]
else
  echo "ok - # SKIP pkexec: needs pkexec, polkitd, dbus-daemon and unshare"
fi

[ -n "${VERBOSE:-}" ] && { echo "--- mpin approve said:"; cat "$WORK/approve.log" 2>/dev/null; } >&2
summary
