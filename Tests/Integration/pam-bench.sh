#!/usr/bin/env bash
# Benchmark lines for `make bench`: the median latency pam_mpin.so adds over pam_permit.so in a
# pamtester run against a local release-built mpin-server (PIN supplied), and the size of the
# module as installed (stripped).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"
RUNS=${RUNS:-41}

mkdir -m 700 "$WORK/store" "$WORK/pam.d"
start_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND"
echo 1234 | "$BIN/mpinctl" --config "$WORK/mpin.conf" register bench --identity bench@example.org --pin-stdin >/dev/null || exit 1
printf 'auth required %s config=%s\naccount required pam_permit.so\n' "$BIN/libpam_mpin.so" "$WORK/mpin.conf" > "$WORK/pam.d/mpin"
printf 'auth required pam_permit.so\naccount required pam_permit.so\n' > "$WORK/pam.d/permit"

# median_ms SERVICE: median wall time of RUNS pamtester authentications, in microseconds.
median_us() {
  local samples=()
  for _ in $(seq 1 "$RUNS"); do
    local t0 t1
    t0=$(date +%s%6N)
    echo 1234 | LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$WORK/pam.d" \
      pamtester "$1" bench authenticate >/dev/null 2>&1 || { echo "pamtester $1 failed" >&2; return 1; }
    t1=$(date +%s%6N)
    samples+=($((t1 - t0)))
  done
  printf '%s\n' "${samples[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"
}
mpin=$(median_us mpin) || exit 1
permit=$(median_us permit) || exit 1
awk -v a="$mpin" -v b="$permit" 'BEGIN { printf "pam_added_ms %.1f\n", (a - b) / 1000 }'
cp "$BIN/libpam_mpin.so" "$WORK/pam_mpin.so" && strip --strip-unneeded "$WORK/pam_mpin.so"
echo "pam_so_bytes $(stat -c %s "$WORK/pam_mpin.so")"
