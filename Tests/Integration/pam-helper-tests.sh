#!/usr/bin/env bash
# pam_mpin.so and its helper (pam/Module): which helper it runs and how, what it gives it, and
# what a helper that fails costs. Through pamtester and libpam-wrapper (lib.sh); needs the
# release builds of pam_mpin, mpinctl and mpin-server (make test-pam).
# README recipes covered here: "Troubleshooting" (the helper refusals) and "Security notes" (the
# helper refused).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"

suite_setup
echo 1234 | ctl register alice --identity alice@example.org --pin-stdin >/dev/null || fail "mpinctl registers alice"
build_thread_check

# pam_mpin.so and its helper (pam/Module): a helper that is missing, not trusted, ends
# without a result or stays silent costs one failed call (PAM_SERVICE_ERR), logged. The test
# helpers live in $TRUSTED (lib.sh): /tmp is writable by everyone, so the module refuses
# anything under it.
"$BIN/mpin-pam-helper" </dev/null >/dev/null 2>&1
check "mpin-pam-helper run by hand (fd 0 not a socket) refuses with status 2" [ "$?" -eq 2 ]
check "a directory for trusted test helpers" [ -n "$TRUSTED" ]
cp -p "$BIN/mpin-pam-helper" "$TRUSTED/helper-gw" && chmod 775 "$TRUSTED/helper-gw"
# (sleep 60.123: a duration no other program on the machine is likely to sleep, so that the
# check below finds this helper's process, not another suite's)
printf '#!/bin/sh\nexec sleep 60.123\n' > "$TRUSTED/helper-silent" && chmod 755 "$TRUSTED/helper-silent"
# (its frames go to fd 0, the module's socket; stdout is /dev/null)
printf '#!/bin/sh\nprintf "X\\000\\000\\000\\000" >&0\nexec sleep 60\n' > "$TRUSTED/helper-garbage" && chmod 755 "$TRUSTED/helper-garbage"
FALSE=$(readlink -f /bin/false)  # /bin is a symbolic link on merged-/usr systems: refused
service mpin-garbagehelper "auth required $PAM_SO helper=$TRUSTED/helper-garbage config=$WORK/mpin.conf" "account required pam_permit.so"
service mpin-nohelper "auth required $PAM_SO helper=$TRUSTED/missing-helper config=$WORK/mpin.conf" "account required pam_permit.so"
service mpin-relhelper "auth required $PAM_SO helper=bin/mpin-pam-helper config=$WORK/mpin.conf" "account required pam_permit.so"
service mpin-gwhelper "auth required $PAM_SO helper=$TRUSTED/helper-gw config=$WORK/mpin.conf" "account required pam_permit.so"
service mpin-falsehelper "auth required $PAM_SO helper=$FALSE config=$WORK/mpin.conf" "account required pam_permit.so"
service mpin-silenthelper "auth required $PAM_SO helper=$TRUSTED/helper-silent config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-nohelper alice 1234
check_all "a missing helper is PAM_SERVICE_ERR, logged with its path" \
  '[ "$RC" -ne 0 ] && grep -q "Error in service module" <<<"$OUT" && grep -q "cannot run $TRUSTED/missing-helper" <<<"$OUT"'
pamt mpin-relhelper alice 1234
check_all "a relative helper path is refused" '[ "$RC" -ne 0 ] && grep -q "helper=bin/mpin-pam-helper: not an absolute path" <<<"$OUT"'
pamt mpin-gwhelper alice 1234
check_all "a group-writable helper is refused" '[ "$RC" -ne 0 ] && grep -q "refusing to run $TRUSTED/helper-gw" <<<"$OUT"'
pamt mpin-falsehelper alice 1234
check_all "a helper that ends without a result is PAM_SERVICE_ERR" \
  '[ "$RC" -ne 0 ] && grep -q "Error in service module" <<<"$OUT" && grep -q "$FALSE stopped: it ended without a result" <<<"$OUT"'
T0=$(millis); pamt mpin-garbagehelper alice 1234; T1=$(millis)
check_all "a helper that breaks the protocol is stopped at once and is PAM_SERVICE_ERR ($((T1 - T0)) ms)" \
  '[ "$RC" -ne 0 ] && grep -q "Error in service module" <<<"$OUT" && grep -q "helper-garbage stopped: it broke the protocol" <<<"$OUT" && [ $((T1 - T0)) -lt 5000 ]'

# The helper is opened without following symbolic links, checked on that descriptor with every
# directory above it, and that descriptor is what runs (docs/SECURITY.md §6.3: the C module
# checked with stat() and then ran the path, so a symbolic link or a directory a user could
# change swapped in that user's program). Each of these would run the real helper, and log
# alice in with her right PIN, if the module followed the path.
ln -s "$BIN/mpin-pam-helper" "$TRUSTED/helper-link"
service mpin-linkhelper "auth required $PAM_SO helper=$TRUSTED/helper-link config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-linkhelper alice 1234
check_all "a helper= that is a symbolic link (to the real helper) is refused" \
  '[ "$RC" -ne 0 ] && grep -q "refusing to run $TRUSTED/helper-link: it is a symbolic link" <<<"$OUT" && ! grep -q "outcome=OK" <<<"$OUT"'
ln -s "$(readlink -f "$BIN")" "$TRUSTED/linked-bin"
service mpin-linkdirhelper "auth required $PAM_SO helper=$TRUSTED/linked-bin/mpin-pam-helper config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-linkdirhelper alice 1234
check_all "a helper reached through a symbolically linked directory is refused" \
  '[ "$RC" -ne 0 ] && grep -q "refusing to run $TRUSTED/linked-bin/mpin-pam-helper: $TRUSTED/linked-bin is a symbolic link or not a directory" <<<"$OUT" && ! grep -q "outcome=OK" <<<"$OUT"'
mkdir "$TRUSTED/users" && cp -p "$BIN/mpin-pam-helper" "$TRUSTED/users/" && chown nobody "$TRUSTED/users"
service mpin-userdirhelper "auth required $PAM_SO helper=$TRUSTED/users/mpin-pam-helper config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-userdirhelper alice 1234
check_all "a root-owned helper in a directory another user owns is refused" \
  '[ "$RC" -ne 0 ] && grep -q "refusing to run $TRUSTED/users/mpin-pam-helper: $TRUSTED/users must be owned by root and writable only by root" <<<"$OUT" && ! grep -q "outcome=OK" <<<"$OUT"'
mkdir "$TRUSTED/open" && cp -p "$BIN/mpin-pam-helper" "$TRUSTED/open/" && chmod 1777 "$TRUSTED/open"
service mpin-opendirhelper "auth required $PAM_SO helper=$TRUSTED/open/mpin-pam-helper config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-opendirhelper alice 1234
check_all "a root-owned helper in a world-writable directory (sticky, as /tmp) is refused" \
  '[ "$RC" -ne 0 ] && grep -q "refusing to run $TRUSTED/open/mpin-pam-helper: $TRUSTED/open must be owned by root" <<<"$OUT" && ! grep -q "outcome=OK" <<<"$OUT"'
# A sticky world-writable directory the path only passes through (as /tmp) is allowed: only
# root can rename or remove root's entries there, and the next directory must be root's.
# The helpers that are run here are copies of the real one, without the suites' test name
# service (nss_setup): they log in daemon, an account every Debian system has.
echo 1234 | ctl register daemon --identity daemon@example.org --pin-stdin >/dev/null
mkdir -m 755 "$TRUSTED/open/inner" && cp -p "$BIN/mpin-pam-helper" "$TRUSTED/open/inner/"
service mpin-belowopen "auth required $PAM_SO helper=$TRUSTED/open/inner/mpin-pam-helper config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-belowopen daemon 1234
check "a helper in root's 0755 directory below a sticky world-writable one runs" [ "$RC" -eq 0 ]
mkdir "$TRUSTED/group" && cp -p "$BIN/mpin-pam-helper" "$TRUSTED/group/" && chmod 775 "$TRUSTED/group"
service mpin-groupdirhelper "auth required $PAM_SO helper=$TRUSTED/group/mpin-pam-helper config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-groupdirhelper alice 1234
check_all "a root-owned helper in a group-writable directory is refused" \
  '[ "$RC" -ne 0 ] && grep -q "refusing to run $TRUSTED/group/mpin-pam-helper" <<<"$OUT" && ! grep -q "outcome=OK" <<<"$OUT"'
mkfifo "$TRUSTED/helper-fifo"
service mpin-fifohelper "auth required $PAM_SO helper=$TRUSTED/helper-fifo config=$WORK/mpin.conf" "account required pam_permit.so"
T0=$(millis); PAMT_TIMEOUT=5 pamt mpin-fifohelper alice 1234; T1=$(millis)
check_all "a FIFO as helper is refused without blocking ($((T1 - T0)) ms)" \
  '[ "$RC" -ne 0 ] && grep -q "refusing to run $TRUSTED/helper-fifo: it must be a regular file" <<<"$OUT" && [ $((T1 - T0)) -lt 5000 ]'
# The real helper, named by a path of trusted directories, still runs: the refusals above are
# the directories' and links' doing.
cp -p "$BIN/mpin-pam-helper" "$TRUSTED/mpin-pam-helper"
service mpin-copyhelper "auth required $PAM_SO helper=$TRUSTED/mpin-pam-helper config=$WORK/mpin.conf" "account required pam_permit.so"
pamt mpin-copyhelper daemon 1234
check "the same helper in a trusted directory logs daemon in" [ "$RC" -eq 0 ]

# What the module gives its helper: the START frame's call byte, flags (PAM_SILENT here) and
# arguments, only fds 0-2 (a script also keeps the file it runs from, for its interpreter),
# and an environment of its own. The helper is a script that logs what it got and says yes.
cat > "$TRUSTED/helper-echo" <<'PY'
#!/usr/bin/python3
import os, socket, struct
s = socket.socket(fileno=0)
def read(n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise SystemExit(3)
        data += chunk
    return data
kind, length = struct.unpack(">cI", read(5))
payload = read(length)
flags = struct.unpack(">I", payload[1:5])[0]
args = payload[5:].split(b"\0")[:-1]
def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
fds = [fd for fd in range(256) if is_open(fd)]
line = "start=%s call=%s flags=%d args=%s fds=%s env=%s" % (kind.decode(), chr(payload[0]), flags,
    ",".join(a.decode() for a in args), ",".join(map(str, fds)), ",".join(sorted(os.environ)))
def frame(kind, payload):
    s.sendall(kind + struct.pack(">I", len(payload)) + payload)
frame(b"L", b"\x06" + line.encode())
frame(b"E", b"\x00")
PY
chmod 755 "$TRUSTED/helper-echo"
service mpin-echohelper "auth required $PAM_SO helper=$TRUSTED/helper-echo one two=2" "account required pam_permit.so"
OUT=$(pam_env \
      timeout 30 pamtester mpin-echohelper alice 'authenticate(PAM_SILENT)' 2>&1); RC=$?
check_all "START carries the call, the flags (PAM_SILENT) and the arguments" \
  '[ "$RC" -eq 0 ] && grep -q "start=S call=a flags=32768 args=helper=$TRUSTED/helper-echo,one,two=2 " <<<"$OUT"'
check_all "the helper gets fds 0-2 and 3 (the script itself, for its interpreter), PATH and SWIFT_BACKTRACE only (python adds LC_CTYPE)" \
  'grep -Eq " fds=0,1,2,3 env=(LC_CTYPE,)?PATH,SWIFT_BACKTRACE$" <<<"$OUT"'
# A compiled helper (no interpreter) keeps nothing but fds 0-2: the file it runs from is
# close-on-exec.
cat > "$WORK/helper-fds.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
    unsigned char h[5], buf[4096];
    if (read(0, h, 5) != 5) return 1;
    size_t len = (size_t)h[1] << 24 | (size_t)h[2] << 16 | (size_t)h[3] << 8 | h[4];
    while (len > 0) { ssize_t n = read(0, buf, len < sizeof buf ? len : sizeof buf); if (n <= 0) return 1; len -= (size_t)n; }
    char line[512] = "fds=";
    for (int fd = 0; fd < 256; fd++)
        if (fcntl(fd, F_GETFD) != -1) snprintf(line + strlen(line), sizeof line - strlen(line), "%s%d", line[4] ? "," : "", fd);
    size_t n = strlen(line);
    unsigned char frame[600] = {'L', 0, 0, (unsigned char)((n + 1) >> 8), (unsigned char)(n + 1), 6};
    memcpy(frame + 6, line, n);
    unsigned char result[6] = {'E', 0, 0, 0, 1, 0};
    return write(0, frame, n + 6) == (ssize_t)(n + 6) && write(0, result, 6) == 6 ? 0 : 1;
}
C
"$(command -v clang || command -v cc)" -o "$TRUSTED/helper-fds" "$WORK/helper-fds.c" && chmod 755 "$TRUSTED/helper-fds"
service mpin-fdshelper "auth required $PAM_SO helper=$TRUSTED/helper-fds"
pamt mpin-fdshelper alice ""
check_all "a compiled helper gets exactly fds 0, 1 and 2" '[ "$RC" -eq 0 ] && grep -q "fds=0,1,2$" <<<"$OUT"'
printf '#!/bin/sh\nkill -SEGV $$\n' > "$TRUSTED/helper-crash" && chmod 755 "$TRUSTED/helper-crash"
service mpin-crashhelper "auth required $PAM_SO helper=$TRUSTED/helper-crash"
pamt mpin-crashhelper alice ""
check_all "a helper that crashes is PAM_SERVICE_ERR, logged with its signal" \
  '[ "$RC" -ne 0 ] && grep -q "Error in service module" <<<"$OUT" && grep -q "helper-crash stopped: signal 11" <<<"$OUT"'
service mpin-account-echo "auth required pam_permit.so" "account required $PAM_SO helper=$TRUSTED/helper-echo"
OUT=$(pam_env \
      timeout 30 pamtester mpin-account-echo alice acct_mgmt 2>&1); RC=$?
check_all "account management is call m with flags 0" '[ "$RC" -eq 0 ] && grep -q "start=S call=m flags=0 args=helper=" <<<"$OUT"'

# A host with threads and children of its own (pam-thread-check.c, host mode): the module
# forks while another thread allocates, reaps its own helper and leaves the host's exited
# child for the host to reap.
check_all "a multithreaded host keeps its own child and is left no other (rc=0 child=kept others=none)" \
  '[[ "$(threads_of mpin alice 1234 host)" == "rc=0 threads=2,2,2 child=kept others=none" ]]'

# The helper's side: a START frame longer than the protocol allows ends it (status 1) at once.
python3 - "$BIN/mpin-pam-helper" <<'PY'
import socket, subprocess, sys
a, b = socket.socketpair()
p = subprocess.Popen([sys.argv[1]], stdin=b, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
b.close()
a.sendall(b"S\x7f\xff\xff\xff")
sys.exit(0 if p.wait(timeout=10) == 1 and a.recv(1) == b"" else 1)
PY
check "mpin-pam-helper refuses an oversized frame from the module and exits 1" [ "$?" -eq 0 ]
# A START without the 4 flag bytes (the format before the flags) ends it too, with no frame sent.
python3 - "$BIN/mpin-pam-helper" <<'PY'
import socket, subprocess, sys
a, b = socket.socketpair()
p = subprocess.Popen([sys.argv[1]], stdin=b, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
b.close()
a.sendall(b"S\x00\x00\x00\x04a\x00\x00\x00")
sys.exit(0 if p.wait(timeout=10) == 1 and a.recv(1) == b"" else 1)
PY
check "mpin-pam-helper refuses a START too short to hold the flags and exits 1" [ "$?" -eq 0 ]
T0=$(millis); pamt mpin-silenthelper alice 1234; T1=$(millis)
check_all "a silent helper is stopped after 10 s (its first watchdog), nothing left running ($((T1 - T0)) ms)" \
  '[ "$RC" -ne 0 ] && grep -q "stopped: it did not answer in time" <<<"$OUT" && [ $((T1 - T0)) -ge 9500 ] && [ $((T1 - T0)) -lt 25000 ] && ! pgrep -f "sleep 60.123" >/dev/null'

# The tools' own failures must fail these checks, so their output is taken only if they succeed.
LDD_OUT=$(ldd "$PAM_SO") && LDD_RC=0 || LDD_RC=$?
NM_OUT=$(nm -D --defined-only "$PAM_SO" | awk '$2 ~ /[A-Z]/ {print $3}') && NM_RC=0 || NM_RC=$?
check_all "the module links no libswift" '[ "$LDD_RC" -eq 0 ] && grep -q "libc.so" <<<"$LDD_OUT" && ! grep -q libswift <<<"$LDD_OUT"'
# libcurl is loaded on first use: not when sudo or sshd load the module.
check_all "the module does not link libcurl at load time" '[ "$LDD_RC" -eq 0 ] && ! grep -q libcurl <<<"$LDD_OUT"'
check_all "the module exports only pam_sm_*" \
  '[ "$NM_RC" -eq 0 ] && grep -qx pam_sm_authenticate <<<"$NM_OUT" && ! grep -qv "^pam_sm_" <<<"$NM_OUT"'
# docs/DESIGN.md §2: the module is Embedded Swift, as small as the C one was, hardened like it.
STRIPPED="$WORK/pam_mpin.stripped.so"
SIZE=$(strip -o "$STRIPPED" "$PAM_SO" && stat -c %s "$STRIPPED") || SIZE=""
check_all "the stripped module is at most 64 KiB (${SIZE:-?} bytes)" '[ -n "$SIZE" ] && [ "$SIZE" -le 65536 ]'
DYN=$(readelf -d "$PAM_SO") && PHDRS=$(readelf -lW "$PAM_SO") && SYMS=$(nm -D "$PAM_SO") && ELF_RC=0 || ELF_RC=$?
check_all "the module has full RELRO (BIND_NOW, GNU_RELRO) and a non-executable stack" \
  '[ "$ELF_RC" -eq 0 ] && grep -q "BIND_NOW" <<<"$DYN" && grep -q "GNU_RELRO" <<<"$PHDRS" && grep -E "GNU_STACK" <<<"$PHDRS" | grep -qv "RWE"'
check_all "the module has a stack protector and needs no swift_* symbol" \
  '[ "$ELF_RC" -eq 0 ] && grep -q " U __stack_chk_fail" <<<"$SYMS" && ! grep -q "swift_" <<<"$SYMS"'
check "a Swift file defines the PAM entry points; no C file does" \
  bash -c 'grep -q "@_cdecl(\"pam_sm_authenticate\")" "$1"/pam/Module/*.swift && ! grep -rl pam_sm_authenticate --include="*.c" "$1/pam" "$1/Sources"' _ "$ROOT"

summary
