#!/usr/bin/env bash
# Benchmark line for `make bench`: `device_approval_to_success_ms`, the median time from
# starting `mpin approve` (PIN on standard input) to pamtester's PAM_SUCCESS in `mode = device`
# on loopback. It is an upper bound of the approval-to-success time: it includes the device's
# whole authentication (client settings, time permits, both passes) besides the module's poll
# (every 200 ms) and final step.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"
RUNS=${RUNS:-11}

mkdir -m 700 "$WORK/store" "$WORK/pam.d" && mkdir -p "$WORK/home"
PORT=$(free_port)
"$BIN/mpin-server" init --data "$WORK/server" --auto-activate >/dev/null || exit 1
python3 - "$WORK/server/config.json" <<'PY' || exit 1
import json, sys
c = json.load(open(sys.argv[1])); c["accessNumberRequestsPerMinute"] = 10000
json.dump(c, open(sys.argv[1], "w"))
PY
restart_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND" "mode = device" "device_timeout = 20"
printf 'auth required %s config=%s\naccount required pam_permit.so\n' "$MODULE_LINE" "$WORK/mpin.conf" > "$WORK/pam.d/device"
mpin() { env -u XDG_DATA_HOME HOME="$WORK/home" "$BIN/mpin" "$@"; }
echo 1234 | mpin register --backend "$BACKEND" --verdict-key "$VERDICT_KEY" --identity bench@example.org --pin-stdin >/dev/null || exit 1
"$BIN/mpinctl" --config "$WORK/mpin.conf" link daemon --identity bench@example.org \
  --registration "$(mpin list --fingerprints | cut -f4)" >/dev/null || exit 1

samples=()
for _ in $(seq 1 "$RUNS"); do
  : > "$WORK/pam.out"
  LD_PRELOAD="libpam_wrapper.so /usr/libexec/coreutils/libstdbuf.so" _STDBUF_O=L PAM_WRAPPER=1 \
    PAM_WRAPPER_SERVICE_DIR="$WORK/pam.d" timeout 30 pamtester device daemon authenticate </dev/null >"$WORK/pam.out" 2>&1 &
  pid=$!
  n=""
  for _ in $(seq 1 200); do
    n=$(sed -n 's/.*mpin approve \([0-9]\{7\}\).*/\1/p' "$WORK/pam.out" | head -1); [ -n "$n" ] && break; sleep 0.05
  done
  [ -n "$n" ] || { echo "no access number" >&2; exit 1; }
  t0=$(date +%s%6N)
  echo 1234 | mpin approve "$n" --pin-stdin >/dev/null 2>&1 || { echo "mpin approve failed" >&2; exit 1; }
  wait "$pid" || { echo "pamtester failed" >&2; exit 1; }
  t1=$(date +%s%6N)
  samples+=($((t1 - t0)))
done
median=$(printf '%s\n' "${samples[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")
awk -v m="$median" 'BEGIN { printf "device_approval_to_success_ms %.1f\n", m / 1000 }'
stop_server
