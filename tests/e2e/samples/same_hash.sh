#!/bin/bash
# same_hash.sh: run SAMPLE ARGS and SAMPLE ARGS VARIANT_ARGS (e.g. --partitioned); both must
# PASS and print the same hash (the hand-partitioned versions compute the same bits).
# usage: same_hash.sh SAMPLE [ARGS...] -- VARIANT_ARGS...
set -u
sample="$1"; shift
common=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do common+=("$1"); shift; done
[ $# -gt 0 ] && shift
runs=("plain" "variant")
declare -A hashes
for run in "${runs[@]}"; do
    if [ "$run" = plain ]; then out=$("$sample" "${common[@]}" 2>&1); else out=$("$sample" "${common[@]}" "$@" 2>&1); fi
    rc=$?
    echo "=== $run: rc=$rc"; echo "$out" | sed 's/^/    /'
    grep -qx PASS <<<"$out" && [ "$rc" = 0 ] || { echo "same_hash: FAIL: $run run did not pass"; exit 1; }
    hashes[$run]=$(sed -n 's/^hash: //p' <<<"$out")
done
[ -n "${hashes[plain]}" ] && [ "${hashes[plain]}" = "${hashes[variant]}" ] \
    || { echo "same_hash: FAIL: hashes differ (${hashes[plain]} vs ${hashes[variant]})"; exit 1; }
echo "same_hash: PASS (${hashes[plain]})"
