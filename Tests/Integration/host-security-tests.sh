#!/usr/bin/env bash
# The host's side of the first security review (docs/SECURITY.md §6.4, §6.6, §6.8–§6.12) through
# pamtester and libpam-wrapper, against a real mpin-server on 127.0.0.1, each shown the way the
# review showed it. Nothing in /etc changes: the Unix users come from the preloaded test name
# service (lib.sh: nss_setup). Needs root (it runs callers as nobody) and the release builds of
# pam_mpin, mpin-pam-helper, mpinctl, mpin and mpin-server (make test-pam).
# HOST_TEST_BIN=DIR runs the programs in DIR instead (to see the tests fail on older builds).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"
[ -n "${HOST_TEST_BIN:-}" ] && BIN=$HOST_TEST_BIN

[ "$(id -u)" = 0 ] || { echo "host-security-tests.sh must run as root"; exit 1; }

# Kate, josé in Latin-1 (a system whose passwd is not UTF-8), and the suite's own users.
KELVIN_KATE=$(printf '\342\204\252ate')
NSS_USERS="Kate $(printf 'jos\351') frank gina hank ivy" pam_setup
start_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND"

# register USER ID PIN [mpinctl environment...]: mpinctl register, its stderr in $ERR.
register() {
  local user=$1 id=$2 pin=$3; shift 3
  ERR=$(echo "$pin" | env "$@" LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/mpin.conf" register "$user" \
        --identity "$id" --pin-stdin 2>&1 >/dev/null)
  RC=$?
}

service mpin        "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"
# The stack pam-auth-update installs (pam/pam-auth-update/mpin; its "end" is "done" here),
# then the password (here pam_permit, so that falling through shows as success).
service mpin-stack  "auth [success=done authinfo_unavail=ignore ignore=ignore default=die] $MODULE config=$WORK/mpin.conf nouserok" \
                    "auth required pam_permit.so" "account required pam_permit.so"
service mpin-nocase "auth [success=done authinfo_unavail=ignore ignore=ignore default=die] $PAM_SO helper=$HELPER_NOCASE config=$WORK/mpin.conf nouserok" \
                    "auth required pam_permit.so" "account required pam_permit.so"

# --- Finding 4: PAM_USER is resolved by the name service and compared byte for byte -------
register Kate kate@example.org 1357
check "Kate registers" [ "$RC" -eq 0 ]
pamt mpin Kate 1357
check "Kate logs in with her PIN" [ "$RC" -eq 0 ]
pamt mpin "$KELVIN_KATE" 1357
check_all "KELVIN SIGN + ate does not log in with Kate's identity and PIN (USER_UNKNOWN)" \
  '[ "$RC" -ne 0 ] && grep -q "User not known" <<<"$OUT" && ! grep -q "identity=kate@example.org outcome=OK" <<<"$OUT"'

# Latin-1 names: mpinctl refuses an argument that is not UTF-8; a registration under the name
# a lossy decoding gives (jos + U+FFFD) is not reached by another Latin-1 name.
register "$(printf 'jos\351')" jose@example.org 2468
check_all "mpinctl refuses a user name that is not valid UTF-8 (status 64)" \
  '[ "$RC" -eq 64 ] && grep -q "not valid UTF-8" <<<"$ERR" && ! ctl list | grep -q jose@'
register "$(printf 'jos\357\277\275')" jose@example.org 2468
check_all "a registration under jos + U+FFFD is kept, with a warning that no such account exists" \
  '[ "$RC" -eq 0 ] && grep -q "is not a Unix account here" <<<"$ERR"'
pamt mpin "$(printf 'jos\350')" 2468
check_all "Latin-1 jos\\xe8 does not log in with the identity registered as jos\\xef\\xbf\\xbd (refused as USER_UNKNOWN)" \
  '[ "$RC" -ne 0 ] && grep -q "User not known" <<<"$OUT" && grep -q "not valid UTF-8" <<<"$OUT"'
pamt mpin-stack "$(printf 'jos\350')" 2468
check "... also with nouserok (a name that is not UTF-8 is refused, not ignored)" [ "$RC" -ne 0 ]

# A case-insensitive name service (sssd case_sensitive = false): ALICE is alice's account, so
# with nouserok she must not skip alice's PIN.
register ALICE alice@example.org 1234 MPIN_TEST_NSS_NOCASE=1
check_all "mpinctl register ALICE stores alice, the account's pw_name" \
  '[ "$RC" -eq 0 ] && ctl list | grep -q "^alice	alice@example.org	"'
pamt mpin-nocase ALICE 9999
check_all "ALICE with a wrong PIN is refused, not ignored (nouserok does not skip alice's PIN)" \
  '[ "$RC" -ne 0 ] && grep -q "Wrong PIN." <<<"$OUT"'
pamt mpin-nocase ALICE 1234
check_all "ALICE with alice's PIN logs in as alice" '[ "$RC" -eq 0 ] && grep -q "user=alice identity=alice@example.org outcome=OK" <<<"$OUT"'
register zed zed@example.org 1234
pamt mpin zed 1234
check_all "a registration for a name the name service does not know logs nobody in" \
  '[ "$RC" -ne 0 ] && grep -q "User not known" <<<"$OUT" && grep -q "no such Unix account" <<<"$OUT"'

# --- Finding 6: a caller that is not root (a screen locker) ---------------------------------
# What nobody runs must be reachable by nobody wherever the checkout is (it may sit under a
# 0700 home), and pam_mpin.so runs a helper only from directories that only root can write,
# which /tmp is not: copies in a directory of root's under /run, removed at exit. Its PAM
# files, configuration and test name service are readable by nobody; the store (0700 root) is
# not, as on a real host.
REACH=$(mktemp -d /run/mpin-host-it.XXXXXX) && chmod 755 "$REACH" || { echo "cannot make a directory in /run"; exit 1; }
trap 'rm -rf "$REACH"; cleanup' EXIT
cp "$PAM_SO" "$BIN/mpin-pam-helper" "$BIN/mpin" "$NSS_SO" "$REACH/" && chmod 755 "$REACH"/*
NSS_SO="$REACH/nss-shim.so" nss_wrap "$REACH/mpin-pam-helper" "$REACH/helper"
REACH_MODULE="$REACH/pam_mpin.so helper=$REACH/helper"
mkdir -p "$OTHERS/pam.d" && chmod 755 "$OTHERS/pam.d"
cp "$WORK/mpin.conf" "$OTHERS/mpin.conf" && chmod 644 "$OTHERS/mpin.conf"
printf '%s\n' "auth [success=done authinfo_unavail=ignore ignore=ignore default=die] $REACH_MODULE config=$OTHERS/mpin.conf nouserok" \
  "auth required pam_permit.so" "account required $REACH_MODULE config=$OTHERS/mpin.conf" "account required pam_permit.so" \
  > "$OTHERS/pam.d/locker"
{ echo "store = $WORK/store"; echo "mode = device"; echo "timeout = 3"; } > "$OTHERS/device.conf" && chmod 644 "$OTHERS/device.conf"
printf '%s\n' "auth [success=done authinfo_unavail=ignore ignore=ignore default=die] $REACH_MODULE config=$OTHERS/device.conf nouserok" \
  "auth required pam_permit.so" "account required pam_permit.so" > "$OTHERS/pam.d/locker-device"
chmod 644 "$OTHERS/pam.d/"*
# as_nobody OPERATION SERVICE USER ANSWER
as_nobody() {
  OUT=$(printf '%s\n' "$4" | setpriv --reuid=nobody --regid=nogroup --clear-groups env LD_PRELOAD=libpam_wrapper.so \
        PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$OTHERS/pam.d" PAM_WRAPPER_DEBUGLEVEL=2 timeout 30 pamtester "$2" "$3" "$1" 2>&1)
  RC=$?
  [ -z "${VERBOSE:-}" ] || echo "$OUT" >&2
}
as_nobody authenticate locker alice 1234
check_all "a caller that is not root gets PAM_IGNORE for a registered user: the password decides" \
  '[ "$RC" -eq 0 ] && grep -q "user=alice outcome=IGNORED (the caller runs as uid 65534" <<<"$OUT" && ! grep -q "M-Pin PIN" <<<"$OUT"'
as_nobody authenticate locker dora 1234
check "... and for a user without a registration, under nouserok" [ "$RC" -eq 0 ]
as_nobody authenticate locker-device alice ""
check_all "device mode as a caller that is not root: the store refuses it, PAM_IGNORE" \
  '[ "$RC" -eq 0 ] && grep -q "user=alice outcome=IGNORED (the store refuses uid 65534" <<<"$OUT"'
as_nobody acct_mgmt locker alice ""
check_all "account management as a caller that is not root: PAM_IGNORE" '[ "$RC" -eq 0 ] && grep -q "outcome=IGNORED" <<<"$OUT"'

# --- Finding 8: try_first_pass / use_first_pass and the stacked password --------------------
register frank frank@example.org 4680
service mpin-try "auth required $PAM_SET_ITEMS" "auth required $MODULE config=$WORK/mpin.conf try_first_pass debug" \
                 "account required pam_permit.so"
service mpin-use "auth required $PAM_SET_ITEMS" "auth required $MODULE config=$WORK/mpin.conf use_first_pass debug" \
                 "account required pam_permit.so"
for i in 1 2 3; do
  PAM_AUTHTOK="correct horse battery staple" pamt mpin-use frank ""
  [ "$RC" -ne 0 ] && grep -q "PAM_AUTHTOK is not a PIN" <<<"$OUT" || { fail "use_first_pass with a password that is not a PIN fails unsent ($i)"; break; }
done
check_all "use_first_pass: a PAM_AUTHTOK that is not a PIN fails without being sent (3 times)" '[ "$i" -eq 3 ] && [ "$RC" -ne 0 ]'
check_all "... and counted nothing: frank is not blocked and logs in" \
  'ctl show frank | grep -q "^state: REGISTERED$" && pamt mpin frank 4680 && [ "$RC" -eq 0 ]'
PAM_AUTHTOK="hunter2" pamt mpin-try frank 4680
check_all "try_first_pass: a PAM_AUTHTOK that is not a PIN is not sent; the module prompts and the PIN logs in" \
  '[ "$RC" -eq 0 ] && grep -q "M-Pin PIN:" <<<"$OUT" && grep -q "PAM_AUTHTOK is not a PIN" <<<"$OUT"'
PAM_AUTHTOK=12345 pamt mpin-try frank 4680
check_all "try_first_pass: digits of another length than pin_length are not sent either" \
  '[ "$RC" -eq 0 ] && grep -q "M-Pin PIN:" <<<"$OUT" && grep -q "PAM_AUTHTOK is not a PIN" <<<"$OUT"'
PAM_AUTHTOK=4680 pamt mpin-try frank ""
check_all "try_first_pass: a PAM_AUTHTOK that is the PIN logs in without a prompt" \
  '[ "$RC" -eq 0 ] && ! grep -q "M-Pin PIN" <<<"$OUT"'
PAM_AUTHTOK=1111 pamt mpin-try frank 4680
check_all "try_first_pass: a PIN-shaped PAM_AUTHTOK that is wrong is followed by a prompt, and the PIN typed there logs in" \
  '[ "$RC" -eq 0 ] && grep -q "M-Pin PIN (2 attempts left):" <<<"$OUT" && grep -q "PAM_AUTHTOK was a wrong PIN" <<<"$OUT"'
PAM_AUTHTOK=1111 pamt mpin-try frank 1111
check_all "try_first_pass: the same wrong text typed again at the prompt is not sent a second time" \
  '[ "$RC" -ne 0 ] && grep -q "not sent a second time" <<<"$OUT"'
PAM_AUTHTOK=1111 pamt mpin-try frank 1111
check_all "try_first_pass: a wrong PAM_AUTHTOK that leaves one attempt ends the login, no prompt spends the last one" \
  '[ "$RC" -ne 0 ] && grep -q "attempts_left=1 (the login ends" <<<"$OUT" && ! grep -q "not sent a second time" <<<"$OUT"'
check_all "... so two calls counted two wrong PINs, not four: frank is not blocked and logs in" \
  'ctl show frank | grep -q "^state: REGISTERED$" && pamt mpin frank 4680 && [ "$RC" -eq 0 ]'

# --- Finding 9: the PIN's format at registration ---------------------------------------------
register gina gina@example.org "correct horse battery staple"
check_all "mpinctl refuses a pass phrase as PIN (PIN_FORMAT), saying why" \
  '[ "$RC" -eq 1 ] && grep -q "PIN_FORMAT: the PIN must be exactly 4 digits" <<<"$ERR" && grep -q "10000 values" <<<"$ERR"'
register gina gina@example.org 123456
check_all "mpinctl refuses 6 digits when pin_length is 4" '[ "$RC" -eq 1 ] && grep -q PIN_FORMAT <<<"$ERR"'
check "... and registers nothing" bash -c '! grep -q "^gina	.*REGISTERED" <<<"$1"' _ "$(ctl list)"
write_config "$WORK/pin6.conf" "$BACKEND" "pin_length = 6"
ERR=$(echo 123456 | LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/pin6.conf" register gina --identity gina@example.org --pin-stdin 2>&1 >/dev/null)
RC=$?
check_all "with pin_length = 6 a 6-digit PIN registers, with the note that it is no stronger than 4 digits" \
  '[ "$RC" -eq 0 ] && grep -q "no harder to guess than a 4-digit one" <<<"$ERR"'
write_config "$WORK/pin3.conf" "$BACKEND" "pin_length = 3"
"$BIN/mpinctl" --config "$WORK/pin3.conf" list >/dev/null 2>&1
RC=$?
check "pin_length = 3 is a configuration error (status 3)" [ "$RC" -eq 3 ]
mkdir -p "$WORK/home-ivy"
ERR=$(echo abcd | env -u XDG_DATA_HOME HOME="$WORK/home-ivy" "$BIN/mpin" register --backend "$BACKEND" --verdict-key "$VERDICT_KEY" --identity ivy@example.org --pin-stdin 2>&1 >/dev/null)
RC=$?
check_all "mpin register refuses a PIN that is not digits (PIN_FORMAT)" '[ "$RC" -eq 1 ] && grep -q PIN_FORMAT <<<"$ERR"'

# --- Finding 10: PAM_SILENT ---------------------------------------------------------------
# The flags reach the helper in the START frame (pam_mpin.so of the module branch); where this
# tree's protocol has no flags yet, the check cannot be made and is skipped, saying so.
if grep -q MPIN_PAM_FLAGS_SIZE "$ROOT/Sources/CPAMProtocol/mpin_pam_protocol.h"; then
  PAMT_CALL="authenticate(PAM_SILENT)" pamt mpin alice 9999
  check_all "PAM_SILENT: a wrong PIN is refused with the prompt but no message" \
    '[ "$RC" -ne 0 ] && grep -q "M-Pin PIN:" <<<"$OUT" && ! grep -q "Wrong PIN." <<<"$OUT"'
  pamt mpin alice 9999
  check "without PAM_SILENT the message is there" grep -q "Wrong PIN." <<<"$OUT"
  pamt mpin alice 1234
else
  echo "ok - # SKIP PAM_SILENT: this tree's START frame carries no PAM flags (MPIN_PAM_FLAGS_SIZE)"
fi

# --- Finding 11: no core file, not dumpable, while a PIN may be held -------------------------
# probe KIND USER COMMAND...: starts COMMAND as USER with fd 0 a socket (KIND socket: the
# helper, which then waits for its START frame) or a pipe nobody writes (KIND pipe: mpinctl and
# mpin wait for the PIN); once it waits, prints the owner of /proc/PID/status (root when the
# process is not dumpable), its real uid and its core limits; then ends it.
probe() {
  python3 - "$@" <<'PY'
import os, socket, subprocess, sys, time
kind, user, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
prefix = [] if user == "root" else ["setpriv", "--reuid=" + user, "--regid=nogroup", "--clear-groups"]
if kind == "socket":
    ours, theirs = socket.socketpair()
else:
    theirs, ours = os.pipe()
p = subprocess.Popen(prefix + cmd, stdin=theirs, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
report = "never waited"
for _ in range(200):
    time.sleep(0.05)
    try:
        status = open("/proc/%d/status" % p.pid).read()
        name = [l for l in status.splitlines() if l.startswith("Name:")][0].split()[1]
        state = [l for l in status.splitlines() if l.startswith("State:")][0].split()[1]
    except (OSError, IndexError):
        break
    if name in ("setpriv",) or state != "S":
        continue
    time.sleep(0.3)
    uid = [l for l in open("/proc/%d/status" % p.pid).read().splitlines() if l.startswith("Uid:")][0].split()[1]
    core = [l for l in open("/proc/%d/limits" % p.pid).read().splitlines() if l.startswith("Max core file size")][0].split()
    report = "owner=%d uid=%s core=%s,%s" % (os.stat("/proc/%d/status" % p.pid).st_uid, uid, core[4], core[5])
    if os.environ.get("PROBE_REPORT") == "locked":
        report = [l for l in open("/proc/%d/status" % p.pid).read().splitlines() if l.startswith("VmLck:")][0].split()[1]
    break
p.kill()
p.wait()
print(report)
PY
}
PROBE=$(probe socket nobody "$REACH/mpin-pam-helper")
check_all "the helper, run as a user, is not dumpable and has no core limit while it waits ($PROBE)" \
  '[ "$PROBE" = "owner=0 uid=65534 core=0,0" ]'
# Run as root, as under sshd and sudo, the helper and mpinctl lock the pages they touch in
# memory (mlockall), so a PIN or token never goes to swap; only with CAP_IPC_LOCK, which root
# lacks in some containers (then RLIMIT_MEMLOCK forbids it and nothing is locked).
if (( (0x$(awk '/^CapEff:/ {print $2}' /proc/self/status) >> 14) & 1 )); then
  # The helper locks them once it asks for the PIN (users it answers without one pay nothing):
  # Kate's login waits at the PIN prompt (pamtester reads a FIFO nobody writes yet), the
  # helper (pamtester's child) is read, then the PIN is given and the login must succeed.
  rm -f "$WORK/lock.fifo" && mkfifo "$WORK/lock.fifo"
  LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$SERVICES" \
    timeout 30 pamtester mpin Kate authenticate <"$WORK/lock.fifo" >"$WORK/lock.out" 2>&1 &
  TIMEOUT_PID=$!
  exec 8>"$WORK/lock.fifo"
  LOCKED=0
  for _ in $(seq 100); do
    sleep 0.05
    PT_PID=$(pgrep -P "$TIMEOUT_PID" | head -1); [ -n "$PT_PID" ] || continue
    HELPER_PID=$(pgrep -P "$PT_PID" | head -1); [ -n "$HELPER_PID" ] || continue
    LOCKED=$(awk '/^VmLck:/ {print $2}' "/proc/$HELPER_PID/status" 2>/dev/null)
    [ "${LOCKED:-0}" -gt 0 ] 2>/dev/null && break
  done
  echo 1357 >&8; exec 8>&-
  wait "$TIMEOUT_PID"; RC=$?
  check_all "the helper, run as root, locks its pages in memory while it asks for the PIN (VmLck $LOCKED kB)" '[ "${LOCKED:-0}" -gt 0 ] 2>/dev/null'
  check "... and Kate's login then succeeds" [ "$RC" -eq 0 ]
  # docs/SECURITY.md §3, "Locked memory": prompts left waiting (anyone can start `su` after `su`) do
  # not each hold ~12 MB of locked memory: at most 16 helpers lock at once, the others go on without
  # it.
  rm -f "$WORK/many.fifo" && mkfifo "$WORK/many.fifo"
  # The FIFO is held open read-write here, so no pamtester waits to open it and none reads
  # anything until it is closed. They start one after another (pam_wrapper_ready): a login that
  # lost its copy of the services would never reach its prompt, and this count would read it as
  # a helper that neither locked nor said so.
  exec 9<>"$WORK/many.fifo"
  MANY=()
  for i in $(seq 18); do
    LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$SERVICES" PAM_WRAPPER_DEBUGLEVEL=2 \
      timeout 180 pamtester mpin Kate authenticate <"$WORK/many.fifo" >"$WORK/many-$i.out" 2>&1 9>&- &
    MANY+=("$!")
    pam_wrapper_ready "$WORK/many-$i.out" 2
  done
  # The helpers waiting at a prompt: each is the child of a pamtester, the child of a timeout.
  waiting_helpers() {
    local t pt
    for t in "${MANY[@]}"; do
      pt=$(pgrep -P "$t" | head -1)
      [ -n "$pt" ] && pgrep -P "$pt" | head -1
    done
  }
  LOCKED_HELPERS=0; UNLOCKED_NOTES=0
  # Up to 90 s for the 18 to reach their prompts (a loaded machine starts them slowly), counted
  # by the clock: the pamtesters' own timeout (180 s) must not end them while this still reads.
  DEADLINE=$((SECONDS + 90))
  while [ "$SECONDS" -lt "$DEADLINE" ]; do
    sleep 0.1
    LOCKED_HELPERS=0
    for h in $(waiting_helpers); do
      [ "$(awk '/^VmLck:/ {print $2}' "/proc/$h/status" 2>/dev/null || echo 0)" -gt 0 ] 2>/dev/null && LOCKED_HELPERS=$((LOCKED_HELPERS + 1))
    done
    UNLOCKED_NOTES=$(cat "$WORK"/many-*.out | grep -c "memory not locked")
    [ $((LOCKED_HELPERS + UNLOCKED_NOTES)) -ge 18 ] && break
  done
  check "18 prompts left waiting: at most 16 helpers hold locked memory ($LOCKED_HELPERS)" [ "$LOCKED_HELPERS" -le 16 ]
  check "... 16 do ($LOCKED_HELPERS), and the others say in the log that they go on without ($UNLOCKED_NOTES)" \
    [ "$LOCKED_HELPERS" -eq 16 -a "$UNLOCKED_NOTES" -eq 2 ]
  if [ "$LOCKED_HELPERS" -ne 16 ] || [ "$UNLOCKED_NOTES" -ne 2 ]; then
    # What each login did, for the log of a failed run (no secret: no PIN was given yet).
    echo "# slots: $(ls /run/mpin/memlock 2>/dev/null | wc -l); held by: $(fuser /run/mpin/memlock/slot-* 2>/dev/null)"
    for i in $(seq 18); do
      echo "# login $i (timeout ${MANY[$((i - 1))]}): $(grep -v PWRAP_DEBUG "$WORK/many-$i.out" | tr '\n' ' ' | cut -c1-400)"
    done
    ps -eo pid,ppid,stat,etimes,comm | grep -E "timeout|pamtester|mpin" | sed 's/^/# /'
  fi
  WAITED=$(waiting_helpers)
  # The logins end as a person walking away would end them: the prompt's input closes.
  exec 9>&-
  for _ in $(seq 100); do
    ALIVE=""; for t in "${MANY[@]}"; do kill -0 "$t" 2>/dev/null && ALIVE="$ALIVE $t"; done
    [ -z "$ALIVE" ] && break; sleep 0.1
  done
  for t in $ALIVE; do kill "$t" 2>/dev/null; done
  for t in "${MANY[@]}"; do wait "$t" 2>/dev/null; done
  for _ in $(seq 100); do
    LEFT=""; for h in $WAITED; do kill -0 "$h" 2>/dev/null && LEFT="$LEFT $h"; done
    [ -z "$LEFT" ] && break; sleep 0.1
  done
  check "the waiting helpers are gone once their logins end (left:${LEFT:- none})" [ -z "$LEFT" ]
  LOCKED=$(PROBE_REPORT=locked probe socket root "$REACH/mpin-pam-helper")
  check "the helper locks nothing before it has a PIN to ask for (VmLck $LOCKED kB while it waits for the module)" [ "$LOCKED" = 0 ]
  LOCKED=$(PROBE_REPORT=locked probe pipe root env LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/mpin.conf" auth alice --pin-stdin)
  check_all "mpinctl, waiting for the PIN, locks its pages in memory (VmLck $LOCKED kB)" '[ "${LOCKED:-0}" -gt 0 ] 2>/dev/null'
else
  echo "ok - # SKIP memory locking: this root has no CAP_IPC_LOCK"
fi
mkdir -m 700 "$OTHERS/nobody-store" && chown nobody:nogroup "$OTHERS/nobody-store"
PROBE=$(probe pipe nobody "$REACH/mpin" register --backend "$BACKEND" --verdict-key "$VERDICT_KEY" --identity probe@example.org --store "$OTHERS/nobody-store/mpin" --pin-stdin)
check_all "mpin, waiting for the new PIN, is not dumpable and has no core limit ($PROBE)" '[ "$PROBE" = "owner=0 uid=65534 core=0,0" ]'
PROBE=$(probe pipe root env LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/mpin.conf" auth alice --pin-stdin)
check_all "mpinctl, waiting for the PIN, has no core limit ($PROBE)" '[ "${PROBE#*core=}" = "0,0" ]'
# mpinctl runs as root, whose /proc files are root's anyway: the dumpable flag is read by
# calling prctl(PR_GET_DUMPABLE) inside the waiting process with gdb, when gdb is there.
if command -v gdb >/dev/null; then
  mkfifo "$WORK/pin.fifo"
  LD_PRELOAD="$NSS_SO" "$BIN/mpinctl" --config "$WORK/mpin.conf" auth alice --pin-stdin <"$WORK/pin.fifo" >/dev/null 2>&1 &
  CTL_PID=$!
  exec 7>"$WORK/pin.fifo"
  sleep 1
  DUMPABLE=$(timeout 30 gdb -p "$CTL_PID" -batch -ex 'print (int)prctl(3, 0, 0, 0, 0)' 2>/dev/null | sed -n 's/^\$1 = //p')
  kill "$CTL_PID" 2>/dev/null; exec 7>&-; wait "$CTL_PID" 2>/dev/null
  if [ -z "$DUMPABLE" ]; then
    # gdb attached but could not call into the process (some kernels and containers refuse
    # it: "Couldn't write extended state status"): nothing was measured, which is no failure.
    echo "ok - # SKIP mpinctl's dumpable flag: gdb could not call prctl inside the waiting process"
  else
    check "mpinctl, waiting for the PIN, is not dumpable (PR_GET_DUMPABLE = $DUMPABLE)" [ "$DUMPABLE" = 0 ]
  fi
else
  echo "ok - # SKIP mpinctl's dumpable flag: gdb is not installed"
fi

# --- Finding 12: account management ---------------------------------------------------------
service mpin-acct "auth required pam_permit.so" "account required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"
service mpin-acct-badconf "auth required pam_permit.so" "account required $MODULE config=$WORK/missing.conf" "account required pam_permit.so"
service mpin-acct-open "auth required pam_permit.so" "account required $MODULE config=$WORK/missing.conf account_fail_open" \
                       "account required pam_permit.so"
register hank hank@example.org 2580
PAMT_CALL=acct_mgmt pamt mpin-acct hank ""
check "account management: a registered identity gets no opinion (pam_permit decides)" [ "$RC" -eq 0 ]
"$BIN/mpin-server" user revoke --data "$WORK/server" hank@example.org >/dev/null
pamt mpin hank 2580
check_all "a login of the revoked identity is PAM_PERM_DENIED" '[ "$RC" -ne 0 ] && grep -q "outcome=REVOKED" <<<"$OUT"'
PAMT_CALL=acct_mgmt pamt mpin-acct hank ""
check_all "account management refuses the revoked identity (PAM_PERM_DENIED), logged" \
  '[ "$RC" -ne 0 ] && grep -q "Permission denied" <<<"$OUT" && grep -q "account user=hank state=REVOKED outcome=PERM_DENIED" <<<"$OUT"'
check "mpinctl list shows hank REVOKED" grep -q "^hank	hank@example.org	.*	REVOKED$" <<<"$(ctl list)"
PAMT_CALL=acct_mgmt pamt mpin-acct-badconf alice ""
check_all "account management with a missing configuration is PAM_SERVICE_ERR, logged" \
  '[ "$RC" -ne 0 ] && grep -q "Error in service module" <<<"$OUT" && grep -q "refused (PAM_SERVICE_ERR)" <<<"$OUT"'
PAMT_CALL=acct_mgmt pamt mpin-acct-open alice ""
check_all "... and PAM_IGNORE, logged, with account_fail_open" \
  '[ "$RC" -eq 0 ] && grep -q "account_fail_open: no opinion (PAM_IGNORE)" <<<"$OUT"'
chmod 755 "$WORK/store"
PAMT_CALL=acct_mgmt pamt mpin-acct alice ""
chmod 700 "$WORK/store"
check_all "account management with a store others can read is PAM_SERVICE_ERR, naming the store" \
  '[ "$RC" -ne 0 ] && grep -q "Error in service module" <<<"$OUT" && grep -q "$WORK/store" <<<"$OUT"'

summary
