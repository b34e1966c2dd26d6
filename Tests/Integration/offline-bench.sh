#!/usr/bin/env bash
# Benchmark lines for `make bench`: what offline logins cost, against swtpm on 127.0.0.1 (a
# software TPM: a hardware one is slower per command, see docs/PERFORMANCE.md, "Offline logins").
# Each figure is the median of the helper's own duration_ms (the login's time, from the helper's
# start to its outcome) over RUNS logins, through pamtester and pam_mpin.so:
#   offline_online_ms   an online login with offline = yes whose record is a day fresh (no TPM use)
#   offline_enrol_ms    an online login that makes the record (key derivation + CreatePrimary +
#                       Create), interleaved with the one above, so a loaded machine slows both
#   offline_login_ms    an offline login (backend stopped: connection refused): key derivation,
#                       CreatePrimary, Load, Unseal, MAC check
#   offline_enrol_swtpm_cpu_ms, offline_login_swtpm_cpu_ms   swtpm's own CPU per login (mean)
#   offline_no_tpm_ms   the same offline login with the TPM gone (it stops before the key
#                       derivation): offline_login_ms minus this is the key derivation and the TPM
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"
RUNS=${RUNS:-15}
BENCH_USER=daemon
command -v swtpm >/dev/null || { echo "offline-bench: swtpm is missing (make packages)"; exit 1; }

mkdir -m 700 "$WORK/store" "$WORK/pam.d"
start_server || exit 1
start_swtpm tpm || exit 1
SWTPM_PID=$SWTPM_PID_tpm
TCTI=$TCTI_tpm
# swtpm's own CPU time in milliseconds (utime + stime, in clock ticks of 10 ms): the TPM's work,
# which the helper's CPU time does not include.
swtpm_cpu() { awk '{ print ($14 + $15) * 10 }' "/proc/$SWTPM_PID/stat"; }
write_config "$WORK/mpin.conf" "$BACKEND" "offline = yes" "tpm = $TCTI" "offline_attempts = 100"
echo 1234 | "$BIN/mpinctl" --config "$WORK/mpin.conf" register "$BENCH_USER" --identity bench@example.org --pin-stdin >/dev/null || exit 1
printf 'auth required %s config=%s\naccount required pam_permit.so\n' "$MODULE_LINE" "$WORK/mpin.conf" > "$WORK/pam.d/mpin"

# login PIN: one login; prints the helper's duration_ms and the CPU milliseconds (user + system)
# of pamtester and the helper it ran: on a shared, loaded machine the wall time drifts with the
# load, the CPU time much less.
login() {
  local ms
  ms=$(printf '%s\n' "$1" | LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$WORK/pam.d" \
    PAM_WRAPPER_DEBUGLEVEL=2 /usr/bin/time -f 'cpu %U %S' -o "$WORK/time" pamtester mpin "$BENCH_USER" authenticate 2>&1 \
    | sed -n 's/.*outcome=[A-Z_]* duration_ms=\([0-9]*\).*/\1/p' | tail -1)
  echo "$ms $(awk '/^cpu/ { printf "%d", ($2 + $3) * 1000 }' "$WORK/time")"
}
# median FIELD: the median of the FIELDth number of the lines on stdin.
median() { cut -d' ' -f"$1" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"; }
# report NAME SAMPLES...: NAME's wall-clock median, and NAME_cpu's.
report() {
  local name=$1; shift
  echo "${name}_ms $(printf '%s\n' "$@" | median 1)"
  echo "${name}_cpu_ms $(printf '%s\n' "$@" | median 2)"
}

login 1234 >/dev/null
fresh=() enrol=()
tpm_enrol=0
for _ in $(seq 1 "$RUNS"); do
  fresh+=("$(login 1234)")
  rm -f "$WORK/store/"state-offline-*
  before=$(swtpm_cpu)
  enrol+=("$(login 1234)")
  tpm_enrol=$((tpm_enrol + $(swtpm_cpu) - before))
done
report offline_online "${fresh[@]}"
report offline_enrol "${enrol[@]}"
echo "offline_enrol_swtpm_cpu_ms $((tpm_enrol / RUNS))"

stop_server
offline=()
before=$(swtpm_cpu)
for _ in $(seq 1 "$RUNS"); do offline+=("$(login 1234)"); done
report offline_login "${offline[@]}"
echo "offline_login_swtpm_cpu_ms $(( ($(swtpm_cpu) - before) / RUNS ))"
# The same offline login with the TPM gone: everything but the key derivation and the TPM.
kill "${PIDS[-1]}" 2>/dev/null; wait "${PIDS[-1]}" 2>/dev/null
notpm=()
for _ in $(seq 1 "$RUNS"); do notpm+=("$(login 1234)"); done
report offline_no_tpm "${notpm[@]}"
