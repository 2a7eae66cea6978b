#!/bin/bash
# The GPU machine's report: VAST against the native NVIDIA platform on the same run.
# Usage (on the GPU machine, after `source .device/setup.sh`):
#   tests/bench/gpu_report.sh BUILD_DIR OUT_DIR
# Prints Markdown tables: per-call overhead, and per sample: native time, VAST direct time,
# VAST with every kernel forced paged (all pages resident), whether the hashes match.
set -uo pipefail
build=${1:?build dir}
out=${2:-.}
lib=$(readlink -f "$build/icd/libvast.so")
icd=$(mktemp -d)
echo "$lib" > "$icd/vast.icd"
export VAST_BACKEND=${VAST_BACKEND:-NVIDIA}

echo "## Per-call overhead (ns; launch in us)"
tests/bench/overhead.sh "$build" NVIDIA 1 2>&1

run() { # run NAME ARGS... -> "time hash status"
    local r
    r=$("$@" 2>&1)
    printf '%s %s %s\n' "$(echo "$r" | sed -n 's/^time: \([0-9.e+-]*\) s$/\1/p' | tail -1)" \
        "$(echo "$r" | sed -n 's/^hash: //p' | tail -1)" "$(echo "$r" | grep -E '^(PASS|FAIL)' | tail -1)"
    echo "$r" > "$out/last-$(basename "$1").log"
}

echo
echo "## Samples: native NVIDIA vs VAST (same run)"
echo "| sample | args | native s | VAST direct s | direct/native | VAST forced paged s | paged/native | output hash vs native |"
echo "|---|---|---|---|---|---|---|---|"
while read -r name args; do
    [ -z "$name" ] && continue
    set -- $args
    read -r tn hn sn < <(run "$build/samples/$name" --platform NVIDIA "$@")
    read -r td hd sd < <(OCL_ICD_VENDORS=$icd OCL_ICD_FILENAMES=$lib run "$build/samples/$name" --platform VAST "$@")
    read -r tp hp sp < <(OCL_ICD_VENDORS=$icd OCL_ICD_FILENAMES=$lib VAST_FORCE_PAGED=1 run "$build/samples/$name" --platform VAST "$@")
    same="direct $([ "$hn" = "$hd" ] && echo equal || echo DIFFERS), paged $([ "$hn" = "$hp" ] && echo equal || echo DIFFERS)"
    ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }'; }
    echo "| $name | $args | $tn $sn | $td $sd | $(ratio "$td" "$tn") | $tp $sp | $(ratio "$tp" "$tn") | $same |"
done <<'LIST'
vecadd -n 64M
MatrixMul -n 2048
saxpy -n 64M --iterations 10
BlackScholes -n 16M --iterations 4
FDTD3d -n 256 --iterations 4
MedianFilter --width 4096 --height 4096
SobelFilter --width 4096 --height 4096
MersenneTwister -n 64M
NBody -n 32768
Reduction -n 64M
SpMV --rows 4M --width 32 --cols 4M
LIST
