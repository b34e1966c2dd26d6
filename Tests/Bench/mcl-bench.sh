#!/usr/bin/env bash
# `make bench-mcl`: MPinCrypto against mcl (github.com/herumi/mcl) on the same curve, BN254CX,
# side by side in one run (docs/PERFORMANCE.md §2.1). mcl is built from its public sources in a
# temporary directory that is deleted afterwards; nothing of it enters this repository.
#
# Both programs time the same operations (Tests/Bench/mcl-bench.cpp lists them) with the
# thread's CPU time (MPIN_BENCH_CLOCK=cpu), which the other work of a shared machine disturbs
# far less than wall time; ROUNDS interleaved rounds (ours, then mcl's), medians. Prints
# `NAME µs` for ours, `mcl_NAME µs`, and `NAME_vs_mcl` (ours / mcl, two decimals).
#
# Usage: mcl-bench.sh [MPIN_BENCH]   (default .build/release/mpin-bench)
#   MCL_SRC=DIR   use an mcl source tree already on disk (copied, never built in place)
#   MCL_GIT=URL   where to clone it from otherwise (default https://github.com/herumi/mcl)
#   ROUNDS=N      interleaved rounds (default 5)
set -euo pipefail
ours=$(realpath "${1:-.build/release/mpin-bench}")
here=$(cd "$(dirname "$0")" && pwd)
rounds=${ROUNDS:-5}
ops="g1_mul g2_mul_point pairing double_pairing"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -n "${MCL_SRC:-}" ]; then
    cp -r "$MCL_SRC" "$work/mcl"
else
    git clone --quiet --depth 1 "${MCL_GIT:-https://github.com/herumi/mcl}" "$work/mcl"
fi
echo "mcl: $(git -C "$work/mcl" log -1 --format=%h 2>/dev/null || echo 'source tree'), building (about 2 min)" >&2
make -C "$work/mcl" -j"$(nproc)" MCL_FP_BIT=384 MCL_FR_BIT=256 lib/libmcl.a >"$work/build.log" 2>&1 || { tail -20 "$work/build.log" >&2; exit 1; }
g++ -O3 -DNDEBUG -DMCL_FP_BIT=384 -DMCL_FR_BIT=256 -DMCL_BINT_ASM=1 -DMCL_MSM=1 -std=c++11 -I "$work/mcl/include" "$here/mcl-bench.cpp" "$work/mcl/lib/libmcl.a" -lgmpxx -lgmp \
    -o "$work/mcl-bench"

for ((i = 0; i < rounds; i++)); do
    MPIN_BENCH_CLOCK=cpu "$ours" $ops | sed 's/^/ours /'
    MPIN_BENCH_CLOCK=cpu "$work/mcl-bench" $ops | sed 's/^/mcl /'
done >"$work/samples"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for op in $ops; do
    a=$(awk -v op="$op" '$1 == "ours" && $2 == op { print $3 }' "$work/samples" | median)
    b=$(awk -v op="$op" '$1 == "mcl" && $2 == op { print $3 }' "$work/samples" | median)
    echo "$op $a"
    echo "mcl_$op $b"
    awk -v a="$a" -v b="$b" -v op="$op" 'BEGIN { printf "%s_vs_mcl %.2f\n", op, a / b }'
done
