#!/usr/bin/env bash
# Counts the instructions each Hamming-weight bench line of mpin-bench executes, under
# valgrind's callgrind, and prints the low/high pairs side by side.
#
# Only the code inside mpin-bench's `measure` is counted (--toggle-collect), so the set-up
# (random master secrets, hashing, decoding) does not enter, and a pair differs only in the
# scalar: 1 (Hamming weight 1) against 2^253 − 1 (Hamming weight 253). A constant-time
# multiplication executes the same instructions for both; a few instructions of difference
# come from printing the two lines' names and medians, which differ in length. Instruction
# counts do not depend on the load of the machine, unlike the medians `make bench` prints.
#
# Usage: instruction-counts.sh [BINARY]   (default .build/release/mpin-bench)
set -euo pipefail
bin=${1:-.build/release/mpin-bench}
command -v valgrind >/dev/null || { echo "instruction-counts: valgrind is not installed" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

count() {
    valgrind --tool=callgrind --callgrind-out-file="$out/$1" --collect-atstart=no \
        --toggle-collect='*mpin_bench7measure*' "$bin" "$1" 2>"$out/$1.log" >/dev/null
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out/$1.log"
}

printf '%-22s %14s %14s %10s\n' operation "weight 1" "weight 253" difference
for op in g1_mul g2_mul g2_mul_point client_pass2; do
    low=$(count "${op}_hw_low")
    high=$(count "${op}_hw_high")
    printf '%-22s %14s %14s %10s\n' "$op" "$low" "$high" "$((high - low))"
done
