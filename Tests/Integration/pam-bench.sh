#!/usr/bin/env bash
# Benchmark lines for `make bench`: the median latency pam_mpin.so adds over pam_permit.so in a
# pamtester run against a local release-built mpin-server (PIN supplied), and the size of the
# module as installed (stripped); `pam_unregistered_ms`: the same for a user without a
# registration under `nouserok`. For reference, `pam_libcurl_floor_ms`: what a PAM module that
# does nothing but link the system's libcurl adds (loading libcurl and its dependencies), when a
# C compiler is available; `pam_added_tls_ms`: a login against an mpin-server serving TLS itself;
# `pam_floor_spawn_ms`: the module running a helper that answers at once (floor-helper.c, a
# static C program), the least any login through a helper process can add.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"
RUNS=${RUNS:-41}
# The module resolves the user with getpwnam (issue 24, finding 4): the logins are those of two
# accounts every Debian system has, so that no test name service (nss_setup) is run in between.
BENCH_USER=daemon BENCH_TLS_USER=bin

mkdir -m 700 "$WORK/store" "$WORK/pam.d"
start_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND"
echo 1234 | "$BIN/mpinctl" --config "$WORK/mpin.conf" register "$BENCH_USER" --identity bench@example.org --pin-stdin >/dev/null || exit 1
printf 'auth required %s config=%s\naccount required pam_permit.so\n' "$MODULE_LINE" "$WORK/mpin.conf" > "$WORK/pam.d/mpin"
printf 'auth required pam_permit.so\naccount required pam_permit.so\n' > "$WORK/pam.d/permit"
printf 'auth sufficient %s config=%s nouserok\nauth required pam_permit.so\naccount required pam_permit.so\n' \
  "$MODULE_LINE" "$WORK/mpin.conf" > "$WORK/pam.d/nouser"

# median_us SERVICE [USER]: median wall time of RUNS pamtester authentications, in microseconds.
median_us() {
  local user=${2:-$BENCH_USER} samples=()
  for _ in $(seq 1 "$RUNS"); do
    local t0 t1
    t0=$(date +%s%6N)
    echo 1234 | LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$WORK/pam.d" \
      pamtester "$1" "$user" authenticate >/dev/null 2>&1 || { echo "pamtester $1 failed" >&2; return 1; }
    t1=$(date +%s%6N)
    samples+=($((t1 - t0)))
  done
  printf '%s\n' "${samples[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"
}
mpin=$(median_us mpin) || exit 1
permit=$(median_us permit) || exit 1
awk -v a="$mpin" -v b="$permit" 'BEGIN { printf "pam_added_ms %.1f\n", (a - b) / 1000 }'
# The floor: the module with a helper that sends RESULT PAM_SUCCESS as soon as it has read
# START. It lives in $TRUSTED (root's, 0755), as the module requires of any helper.
FLOOR_CC=$(command -v cc || command -v clang)
if [ -n "$FLOOR_CC" ] && [ -n "$TRUSTED" ] && "$FLOOR_CC" -static -O2 -I"$ROOT/Sources/CPAMProtocol" -o "$TRUSTED/floor-helper" \
     "$ROOT/Tests/Integration/floor-helper.c" 2>"$WORK/floor-cc.err"; then
  printf 'auth required %s helper=%s\naccount required pam_permit.so\n' "$PAM_SO" "$TRUSTED/floor-helper" > "$WORK/pam.d/floor"
  floor=$(median_us floor) || exit 1
  awk -v a="$floor" -v b="$permit" 'BEGIN { printf "pam_floor_spawn_ms %.1f\n", (a - b) / 1000 }'
else
  echo "pam-bench: no floor helper (no C compiler, static libc or trusted directory):" >&2; cat "$WORK/floor-cc.err" >&2 2>/dev/null
fi
# A user without a registration under `nouserok` (PAM_IGNORE): no network, libcurl not loaded.
nouser=$(median_us nouser nobody) || exit 1
awk -v a="$nouser" -v b="$permit" 'BEGIN { printf "pam_unregistered_ms %.1f\n", (a - b) / 1000 }'
if command -v cc >/dev/null; then
  printf '#include <security/pam_modules.h>\nint pam_sm_authenticate(pam_handle_t *h, int f, int c, const char **v) { return PAM_SUCCESS; }\n' > "$WORK/stub.c"
  if cc -shared -fPIC -o "$WORK/pam_stub_curl.so" "$WORK/stub.c" -Wl,--no-as-needed -lcurl 2>/dev/null; then
    printf 'auth required %s\naccount required pam_permit.so\n' "$WORK/pam_stub_curl.so" > "$WORK/pam.d/stubcurl"
    stub=$(median_us stubcurl) || exit 1
    awk -v a="$stub" -v b="$permit" 'BEGIN { printf "pam_libcurl_floor_ms %.1f\n", (a - b) / 1000 }'
  fi
fi
# `pam_added_tls_ms`: the same login against an mpin-server serving HTTPS itself (swift-nio-ssl,
# the P-256 certificate of `init --self-signed 127.0.0.1`): libcurl is loaded and a TLS
# handshake made.
start_tls_server || exit 1
write_config "$WORK/tls.conf" "https://127.0.0.1:$TLSPORT" "cacert = $CACERT"
echo 1234 | "$BIN/mpinctl" --config "$WORK/tls.conf" register "$BENCH_TLS_USER" --identity benchtls@example.org --pin-stdin >/dev/null || exit 1
printf 'auth required %s config=%s\naccount required pam_permit.so\n' "$MODULE_LINE" "$WORK/tls.conf" > "$WORK/pam.d/tls"
tls=$(median_us tls "$BENCH_TLS_USER") || exit 1
awk -v a="$tls" -v b="$permit" 'BEGIN { printf "pam_added_tls_ms %.1f\n", (a - b) / 1000 }'
cp "$PAM_SO" "$WORK/pam_mpin.so" && strip --strip-unneeded "$WORK/pam_mpin.so"
echo "pam_so_bytes $(stat -c %s "$WORK/pam_mpin.so")"
