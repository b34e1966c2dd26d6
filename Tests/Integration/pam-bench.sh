#!/usr/bin/env bash
# Benchmark lines for `make bench`: the median latency pam_mpin.so adds over pam_permit.so in a
# pamtester run against a local release-built mpin-server (PIN supplied), and the size of the
# module as installed (stripped); `pam_unregistered_ms`: the same for a user without a
# registration under `nouserok`. For reference, `pam_libcurl_floor_ms`: what a PAM module that
# does nothing but link the system's libcurl adds (loading libcurl and its dependencies), when a
# C compiler is available; `pam_added_tls_ms`: a login against an mpin-server serving TLS itself;
# `pam_floor_spawn_ms`: the module running a helper that answers at once (floor-helper.c, a
# static C program), the least any login through a helper process can add.
# pam_added_ms, pam_unregistered_ms and pam_added_tls_ms go through the resident helper
# (`mpin-pam-helper --serve`, what the package installs, here with --listen on a socket in a
# root-owned temporary directory); the same logins with the helper started for each call are
# pam_added_spawn_ms, pam_unregistered_spawn_ms and pam_added_tls_spawn_ms. Each pair is
# measured interleaved (one login of each in turn), so a noisy machine slows both alike.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"
RUNS=${RUNS:-41}
# The module resolves the user with getpwnam (docs/SECURITY.md §6.4): the logins are those of two
# accounts every Debian system has, so that no test name service (nss_setup) is run in between.
BENCH_USER=daemon BENCH_TLS_USER=bin

mkdir -m 700 "$WORK/store" "$WORK/pam.d"
start_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND"
echo 1234 | "$BIN/mpinctl" --config "$WORK/mpin.conf" register "$BENCH_USER" --identity bench@example.org --pin-stdin >/dev/null || exit 1
# The resident helper: the same program the lines name, serving on a socket in $WORK (0700).
SOCK="$WORK/pam-helper.sock"
# CPU time, where cgroup v1's cpuacct can be used: the client side of each login (pamtester, the
# module, a helper it starts, or the resident helper and its child) runs in a cgroup of its own,
# whose cpuacct.usage (nanoseconds) is read around each login; mpin-server stays outside. On a
# shared, loaded machine wall-clock times drift with the load; CPU time much less. Lines
# NAME_cpu_ms then follow the wall-clock ones.
CG=""
if mkdir "/sys/fs/cgroup/cpuacct/mpin-bench.$$" 2>/dev/null; then
  CG="/sys/fs/cgroup/cpuacct/mpin-bench.$$"
  trap 'cleanup; rmdir "$CG" 2>/dev/null' EXIT
fi
# in_cg COMMAND...: COMMAND, in the cgroup if there is one.
in_cg() { if [ -n "$CG" ]; then sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG" "$@"; else "$@"; fi; }
# (sh execs the helper: $! is the resident helper itself, which cleanup stops.)
sh -c '[ -z "$0" ] || echo $$ > "$0/cgroup.procs"; exec "$@"' "$CG" "$HELPER_PATH" --serve --listen "$SOCK" >"$WORK/resident.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || { echo "pam-bench: the resident helper did not start:" >&2; cat "$WORK/resident.log" >&2; exit 1; }
# line SERVICE WORDS...: the service's auth line, through the resident helper; SERVICE-spawn
# the same with the helper started for the call.
line() {
  local name=$1; shift
  printf 'auth %s %s helper_socket=%s %s\n%s' "$1" "$MODULE_LINE" "$SOCK" "${*:2}" "${TAIL:-}" > "$WORK/pam.d/$name"
  printf 'auth %s %s %s\n%s' "$1" "$MODULE_LINE" "${*:2}" "${TAIL:-}" > "$WORK/pam.d/$name-spawn"
}
TAIL=$'account required pam_permit.so\n' line mpin required "config=$WORK/mpin.conf"
printf 'auth required pam_permit.so\naccount required pam_permit.so\n' > "$WORK/pam.d/permit"
# The line names the store: pam_mpin.so looks for the verdict on the configuration there (else in
# /var/lib/mpin), which mpinctl register left.
TAIL=$'auth required pam_permit.so\naccount required pam_permit.so\n' line nouser sufficient "config=$WORK/mpin.conf" "store=$WORK/store" nouserok

# medians_us SERVICE:USER...: the median wall time of each, and its median CPU time (or "-"
# without a cgroup), in microseconds, over RUNS rounds of one login of each in turn; one line
# "WALL CPU" per service.
medians_us() {
  local -A samples=() cpu=()
  local spec t0 t1 c0=0 c1=0
  for _ in $(seq 1 "$RUNS"); do
    for spec in "$@"; do
      [ -n "$CG" ] && c0=$(cat "$CG/cpuacct.usage")
      t0=$(date +%s%6N)
      echo 1234 | LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$WORK/pam.d" \
        in_cg pamtester "${spec%%:*}" "${spec#*:}" authenticate >/dev/null 2>&1 || { echo "pamtester ${spec%%:*} failed" >&2; return 1; }
      t1=$(date +%s%6N)
      # The resident helper's child may still be exiting: its CPU is counted once it has.
      [ -n "$CG" ] && { sleep 0.05; c1=$(cat "$CG/cpuacct.usage"); }
      samples[$spec]+="$((t1 - t0)) "
      cpu[$spec]+="$(( (c1 - c0) / 1000 )) "
    done
  done
  for spec in "$@"; do
    echo "$(printf '%s\n' ${samples[$spec]} | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")" \
         "$([ -n "$CG" ] && printf '%s\n' ${cpu[$spec]} | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p" || echo -)"
  done
}
# added NAME WALL CPU: the line NAME (and NAME_cpu_ms), the time over pam_permit.so in
# milliseconds.
added() {
  awk -v n="$1" -v a="$2" -v b="$permit" 'BEGIN { printf "%s %.1f\n", n, (a - b) / 1000 }'
  [ "$3" != - ] && awk -v n="${1%_ms}_cpu_ms" -v a="$3" -v b="$permit_cpu" 'BEGIN { printf "%s %.1f\n", n, (a - b) / 1000 }'
  return 0
}
{ read -r mpin mpin_cpu; read -r spawn spawn_cpu; read -r permit permit_cpu; } \
  < <(medians_us "mpin:$BENCH_USER" "mpin-spawn:$BENCH_USER" "permit:$BENCH_USER")
[ -n "$permit" ] || exit 1
added pam_added_ms "$mpin" "$mpin_cpu"
added pam_added_spawn_ms "$spawn" "$spawn_cpu"
# The floor: the module with a helper that sends RESULT PAM_SUCCESS as soon as it has read
# START. It lives in $TRUSTED (root's, 0755), as the module requires of any helper.
FLOOR_CC=$(command -v cc || command -v clang)
if [ -n "$FLOOR_CC" ] && [ -n "$TRUSTED" ] && "$FLOOR_CC" -static -O2 -I"$ROOT/Sources/CPAMProtocol" -o "$TRUSTED/floor-helper" \
     "$ROOT/Tests/Integration/floor-helper.c" 2>"$WORK/floor-cc.err"; then
  printf 'auth required %s helper=%s\naccount required pam_permit.so\n' "$PAM_SO" "$TRUSTED/floor-helper" > "$WORK/pam.d/floor"
  # Measured as the other lines are (medians_us: in the cgroup, in turn with pam_permit), so
  # that the difference is the module's and the helper's, not the way of measuring.
  { read -r floor _; read -r floor_permit _; } < <(medians_us "floor:$BENCH_USER" "permit:$BENCH_USER")
  [ -n "$floor_permit" ] || exit 1
  awk -v a="$floor" -v b="$floor_permit" 'BEGIN { printf "pam_floor_spawn_ms %.1f\n", (a - b) / 1000 }'
else
  echo "pam-bench: no floor helper (no C compiler, static libc or trusted directory):" >&2; cat "$WORK/floor-cc.err" >&2 2>/dev/null
fi
# A user without a registration under `nouserok` (PAM_IGNORE): no network, libcurl not loaded.
# pam_permit again, in turn with these (as for the floor): an earlier phase's median drifts
# with the machine by more than these lines measure.
{ read -r nouser nouser_cpu; read -r spawn spawn_cpu; read -r permit permit_cpu; } \
  < <(medians_us nouser:nobody nouser-spawn:nobody permit:nobody)
[ -n "$permit" ] || exit 1
added pam_unregistered_ms "$nouser" "$nouser_cpu"
added pam_unregistered_spawn_ms "$spawn" "$spawn_cpu"
if command -v cc >/dev/null; then
  printf '#include <security/pam_modules.h>\nint pam_sm_authenticate(pam_handle_t *h, int f, int c, const char **v) { return PAM_SUCCESS; }\n' > "$WORK/stub.c"
  if cc -shared -fPIC -o "$WORK/pam_stub_curl.so" "$WORK/stub.c" -Wl,--no-as-needed -lcurl 2>/dev/null; then
    printf 'auth required %s\naccount required pam_permit.so\n' "$WORK/pam_stub_curl.so" > "$WORK/pam.d/stubcurl"
    { read -r stub _; read -r stub_permit _; } < <(medians_us "stubcurl:$BENCH_USER" "permit:$BENCH_USER")
    [ -n "$stub_permit" ] || exit 1
    awk -v a="$stub" -v b="$stub_permit" 'BEGIN { printf "pam_libcurl_floor_ms %.1f\n", (a - b) / 1000 }'
  fi
fi
# `pam_added_tls_ms`: the same login against an mpin-server serving HTTPS itself (swift-nio-ssl,
# the P-256 certificate of `init --self-signed 127.0.0.1`): libcurl is loaded and a TLS
# handshake made.
start_tls_server || exit 1
write_config "$WORK/tls.conf" "https://127.0.0.1:$TLSPORT" "cacert = $CACERT"
echo 1234 | "$BIN/mpinctl" --config "$WORK/tls.conf" register "$BENCH_TLS_USER" --identity benchtls@example.org --pin-stdin >/dev/null || exit 1
TAIL=$'account required pam_permit.so\n' line tls required "config=$WORK/tls.conf"
{ read -r tls tls_cpu; read -r spawn spawn_cpu; read -r permit permit_cpu; } \
  < <(medians_us "tls:$BENCH_TLS_USER" "tls-spawn:$BENCH_TLS_USER" "permit:$BENCH_TLS_USER")
[ -n "$permit" ] || exit 1
added pam_added_tls_ms "$tls" "$tls_cpu"
added pam_added_tls_spawn_ms "$spawn" "$spawn_cpu"
cp "$PAM_SO" "$WORK/pam_mpin.so" && strip --strip-unneeded "$WORK/pam_mpin.so"
echo "pam_so_bytes $(stat -c %s "$WORK/pam_mpin.so")"
