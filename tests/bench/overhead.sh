#!/bin/bash
# Per-call overhead of VAST's pass-through against calling the real platform directly.
# Usage: tests/bench/overhead.sh BUILD_DIR [real-platform-name] [scale]
# Runs the same program three times in one go: directly on the real platform, through VAST
# as an ICD (OCL_ICD_VENDORS for ocl-icd, OCL_ICD_FILENAMES for the Khronos loader that
# CUDA ships) and under LD_PRELOAD, and prints a Markdown table.
set -euo pipefail
build=${1:?build dir}
real=${2:-Portable}
scale=${3:-1}
bin=$build/tests/bench/vast_overhead
lib=$(readlink -f "$build/icd/libvast.so")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "$lib" > "$dir/vast.icd"
"$bin" "$real" "$scale" > "$dir/direct"
OCL_ICD_VENDORS=$dir OCL_ICD_FILENAMES=$lib "$bin" VAST "$scale" > "$dir/icd"
LD_PRELOAD=$lib "$bin" VAST "$scale" > "$dir/preload"
echo "| call | $real direct | VAST (ICD) | VAST (LD_PRELOAD) | ICD / direct |"
echo "|---|---|---|---|---|"
join "$dir/direct" "$dir/icd" | join - "$dir/preload" |
  awk '{ printf "| %s | %.1f | %.1f | %.1f | %.2fx |\n", $1, $2, $3, $4, ($2 > 0 ? $3 / $2 : 0) }'
