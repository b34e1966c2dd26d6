#!/usr/bin/env bash
# pam_mpin.so inside a real sshd (keyboard-interactive, private PAM service through
# libpam-wrapper) and a real sudo (setuid, so its /etc/pam.d/sudo is replaced for the test
# and restored afterwards). A throwaway Unix user is created and removed. Needs root.
# README recipes covered here: "Put it on sudo" (a pam_mpin.so line in /etc/pam.d/sudo: the
# right PIN runs the command as root, a wrong one says "Wrong PIN."), "Put it on sshd"
# (keyboard-interactive, right and wrong PIN, sshd's "Accepted keyboard-interactive/pam") and
# "Device mode" (ssh and sudo approved with `mpin approve` after mpinctl link and mpin register).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"
MODULE=$MODULE_LINE

if [ "$(id -u)" != 0 ]; then echo "login tests need root"; echo "0 passed, 1 failed"; exit 1; fi
# The throwaway user; the original /etc/pam.d/sudo is put back afterwards (lib.sh).
host_test_user mpint

mkdir -m 700 "$WORK/store"
start_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND"
useradd -m -s /bin/sh "$TESTUSER" || { echo "useradd failed"; exit 1; }
echo 2468 | "$BIN/mpinctl" --config "$WORK/mpin.conf" register "$TESTUSER" --identity "$TESTUSER@example.org" --pin-stdin >/dev/null
check "the throwaway user is registered" [ "$?" -eq 0 ]

# --- sshd -------------------------------------------------------------------------------
SSH_PORT=$(free_port)
mkdir -p "$WORK/sshpam"
printf 'auth required %s config=%s\naccount required pam_permit.so\nsession required pam_permit.so\n' \
  "$MODULE" "$WORK/mpin.conf" > "$WORK/sshpam/sshd"
start_sshd "$SSH_PORT" "$WORK/sshpam" sshd

# ssh_login PIN: drives keyboard-interactive on a pty; prints in|denied|error.
ssh_login() {
  python3 - "$SSH_PORT" "$TESTUSER" "$1" <<'PY'
import pexpect, sys
port, user, pin = sys.argv[1:4]
c = pexpect.spawn("ssh", ["-p", port, "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                          "-o", "PreferredAuthentications=keyboard-interactive", "-o", "NumberOfPasswordPrompts=1",
                          "-o", "LogLevel=ERROR", f"{user}@127.0.0.1", "echo", "ran-as-$(id -un)"],
                  timeout=30, encoding="utf-8")
try:
    c.expect(r"M-Pin PIN[^:\n]*: ")
    c.sendline(pin)
    i = c.expect([f"ran-as-{user}", "Permission denied", pexpect.EOF])
    print(["in", "denied", "error"][i])
except pexpect.exceptions.ExceptionPexpect as e:
    print("error")
PY
}
check "ssh: the right PIN logs in and runs a command" [ "$(ssh_login 2468)" = in ]
check "ssh: a wrong PIN is refused" [ "$(ssh_login 1111)" = denied ]
check "sshd logged the keyboard-interactive/pam acceptance" grep -q "Accepted keyboard-interactive/pam for $TESTUSER" "$WORK/sshd.log"
check "ssh: the right PIN works again after one wrong PIN" [ "$(ssh_login 2468)" = in ]

# --- sshd, mode = device ----------------------------------------------------------------
# The host holds no token: a second store and configuration link the user to an identity
# whose token is on "the user's device" (`mpin` with its own HOME), which approves from a
# second process while ssh waits at the module's prompt.
mkdir -m 700 "$WORK/devstore" "$WORK/devpam"
mkdir -p "$WORK/devhome"
printf 'backend = %s\nstore = %s\ntimeout = 10\nmode = device\ndevice_timeout = 20\nverdict_key = %s\n' "$BACKEND" "$WORK/devstore" "$VERDICT_KEY" > "$WORK/mpin-device.conf"
echo 1357 | env -u XDG_DATA_HOME HOME="$WORK/devhome" "$BIN/mpin" register --backend "$BACKEND" --verdict-key "$VERDICT_KEY" \
  --identity "$TESTUSER-dev@example.org" --pin-stdin >/dev/null
DEV_FP=$(env -u XDG_DATA_HOME HOME="$WORK/devhome" "$BIN/mpin" list --fingerprints | cut -f4)
"$BIN/mpinctl" --config "$WORK/mpin-device.conf" link "$TESTUSER" --identity "$TESTUSER-dev@example.org" \
  --registration "$DEV_FP" >/dev/null
check "device mode: the user's device is registered and the host linked" [ "$?" -eq 0 ]
printf 'auth required %s config=%s\naccount required pam_permit.so\nsession required pam_permit.so\n' \
  "$MODULE" "$WORK/mpin-device.conf" > "$WORK/devpam/sshd"
DEV_SSH_PORT=$(free_port)
start_sshd "$DEV_SSH_PORT" "$WORK/devpam" sshd-dev
DEV_SSHD_PID=$SSHD_PID
# ssh_device_login PIN: ssh waits at the module's prompt while `mpin approve` runs with PIN.
ssh_device_login() {
  python3 - "$DEV_SSH_PORT" "$TESTUSER" "$1" "$BIN/mpin" "$WORK/devhome" <<'PY'
import os, pexpect, subprocess, sys, time
port, user, pin, mpin, home = sys.argv[1:6]
c = pexpect.spawn("ssh", ["-p", port, "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                          "-o", "PreferredAuthentications=keyboard-interactive", "-o", "NumberOfPasswordPrompts=1",
                          "-o", "LogLevel=ERROR", f"{user}@127.0.0.1", "echo", "ran-as-$(id -un)"],
                  timeout=40, encoding="utf-8")
try:
    c.expect(r"mpin approve (\d{7})")
    number = c.match.group(1)
    c.expect("Press Enter once approved: ")
    env = {k: v for k, v in os.environ.items() if k != "XDG_DATA_HOME"}
    env["HOME"] = home
    # The approval waits for the login to take it up, which it does once Enter is pressed.
    approve = subprocess.Popen([mpin, "approve", number, "--pin-stdin"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=env, text=True)
    approve.stdin.write(pin + "\n"); approve.stdin.close()
    time.sleep(1)
    c.sendline("")
    approve.wait(timeout=30)
    i = c.expect([f"ran-as-{user}", "Permission denied", pexpect.EOF])
    print(["in", "denied", "error"][i])
except pexpect.exceptions.ExceptionPexpect:
    print("error")
PY
}
check "ssh, device mode: approved from the device, the user logs in" [ "$(ssh_device_login 1357)" = in ]
check "ssh, device mode: a wrong PIN on the device is refused" [ "$(ssh_device_login 9999)" = denied ]
kill "$DEV_SSHD_PID" 2>/dev/null

# --- sudo -------------------------------------------------------------------------------
save_sudo_pam
printf 'auth required %s config=%s\n@include common-account\n@include common-session-noninteractive\n' \
  "$MODULE" "$WORK/mpin.conf" > /etc/pam.d/sudo
printf 'Defaults:%s passwd_tries=1\n%s ALL=(root) /usr/bin/id\n' "$TESTUSER" "$TESTUSER" > "/etc/sudoers.d/$TESTUSER"
chmod 440 "/etc/sudoers.d/$TESTUSER"
# sudo_as PIN: sudo's output on stdout, its exit status in SUDO_RC.
sudo_as() {
  SUDO_OUT=$(printf '%s\n' "$1" | runuser -u "$TESTUSER" -- sudo -S -k /usr/bin/id -un 2>"$WORK/sudo.err")
  SUDO_RC=$?
}
sudo_as 2468
check_all "sudo: the right PIN runs the command as root" '[ "$SUDO_RC" -eq 0 ] && [ "$SUDO_OUT" = root ]'
sudo_as 1357
check_all "sudo: a wrong PIN refuses" '[ "$SUDO_RC" -ne 0 ] && [ -z "$SUDO_OUT" ]'
[ -n "${VERBOSE:-}" ] && { echo "--- sudo (wrong PIN) said:"; cat "$WORK/sudo.err"; } >&2
# sudo calls PAM with PAM_SILENT (Debian 12's sudo always; newer ones unless sudoers says
# !pam_silent): the module then shows no message of its own (docs/SECURITY.md §6.10) and sudo
# says why itself.
check_all "sudo (PAM_SILENT): the module adds no message, sudo says the attempt failed" \
  '! grep -q "Wrong PIN." "$WORK/sudo.err" && grep -q "incorrect password attempt" "$WORK/sudo.err"'
# What M-Pin has to say under PAM_SILENT comes in the next prompt, the one text sudo shows.
sudo_as 2468
check_all "sudo: after a wrong PIN the next prompt says how many attempts are left, and the right PIN works" \
  '[ "$SUDO_RC" -eq 0 ] && grep -q "M-Pin PIN (2 attempts left):" "$WORK/sudo.err"'
# sudo's own retries (three by default) against the server's three attempts: the module ends
# the login when one is left (PAM_MAXTRIES), and the next sudo's prompt says it is the last.
printf 'Defaults:%s passwd_tries=3\n%s ALL=(root) /usr/bin/id\n' "$TESTUSER" "$TESTUSER" > "/etc/sudoers.d/$TESTUSER"
SUDO_OUT=$(printf '1111\n2222\n3333\n' | runuser -u "$TESTUSER" -- sudo -S -k /usr/bin/id -un 2>"$WORK/sudo.err"); SUDO_RC=$?
[ -n "${VERBOSE:-}" ] && { echo "--- sudo (three tries) said:"; cat "$WORK/sudo.err"; } >&2
check_all "sudo with three tries: two wrong PINs end it, the last attempt is not spent by sudo's retry" \
  '[ "$SUDO_RC" -ne 0 ] && [ "$(grep -o "M-Pin PIN[^:]*:" "$WORK/sudo.err" | wc -l)" = 2 ]'
sudo_as 2468
check_all "sudo: the next prompt says it is the last attempt, and the right PIN works" \
  '[ "$SUDO_RC" -eq 0 ] && grep -q "M-Pin PIN (last attempt before the identity is blocked):" "$WORK/sudo.err"'
printf 'Defaults:%s passwd_tries=1\n%s ALL=(root) /usr/bin/id\n' "$TESTUSER" "$TESTUSER" > "/etc/sudoers.d/$TESTUSER"

# sudo in device mode, on a pty (script), as in a terminal (sudo's output to a file would be
# held back in its buffer). sudo_device [ENTER]: with ENTER, the user presses Enter once the
# device approved: under PAM_SILENT the number can only come as a prompt.
printf 'auth required %s config=%s\n@include common-account\n@include common-session-noninteractive\n' \
  "$MODULE" "$WORK/mpin-device.conf" > /etc/pam.d/sudo
sudo_device() {
  rm -f "$WORK/sudo-in"; mkfifo "$WORK/sudo-in"
  : > "$WORK/sudo-dev.out"
  script -qfec "runuser -u $TESTUSER -- sudo -k /usr/bin/id -un" "$WORK/sudo-dev.out" <"$WORK/sudo-in" >/dev/null 2>&1 &
  SUDO_PID=$!
  exec 8>"$WORK/sudo-in"
  N=$(first_match 's/.*mpin approve \([0-9]\{7\}\).*/\1/p' "$WORK/sudo-dev.out")
  if [ -n "$N" ]; then
    echo 1357 | env -u XDG_DATA_HOME HOME="$WORK/devhome" "$BIN/mpin" approve "$N" --pin-stdin >/dev/null 2>&1 &
    local approve=$!
    if [ -n "${1:-}" ]; then sleep 1; echo >&8; fi
    wait "$approve"
  fi
  exec 8>&-
  wait "$SUDO_PID"; SUDO_RC=$?
  [ -n "${VERBOSE:-}" ] && { echo "--- sudo (device mode) said (N=$N rc=$SUDO_RC):"; cat "$WORK/sudo-dev.out"; } >&2
}
sudo_device enter
check_all "sudo, device mode (PAM_SILENT): the number as a prompt, approved, Enter, runs as root" \
  '[ -n "$N" ] && [ "$SUDO_RC" -eq 0 ] && grep -q "Press Enter once approved" "$WORK/sudo-dev.out" && grep -qaE "(^|[^a-z])root.?$" "$WORK/sudo-dev.out"'
check "sudo, device mode (PAM_SILENT): no QR code" bash -c '! grep -q "█" "$1"' _ "$WORK/sudo-dev.out"
restore_sudo_pam
if [ -n "${ORIGINAL_SUDO_PAM:-}" ]; then
  check "sudo's PAM file is restored" [ "$(sha256sum < /etc/pam.d/sudo)" = "$ORIGINAL_SUDO_PAM" ]
else
  check "sudo's PAM file is removed again" [ ! -e /etc/pam.d/sudo ]
fi

summary
