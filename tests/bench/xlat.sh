#!/bin/bash
# Kernel time of MatrixMul's and saxpy's original kernels against their translated paged and
# inspector kernels (xlat_bench: one identity-mapped pool, 64 KiB pages; default sizes MatrixMul
# n=4096 rows=8192, saxpy 128M floats, min and median of 5 runs after a warm-up), every output
# and page accessed set checked. Exits nonzero when a check FAILs.
# Usage: tests/bench/xlat.sh BUILD_DIR OUT_DIR [xlat_bench options, e.g. --reps 10]
# Writes OUT_DIR/xlat.md (the table) and prints it.
set -euo pipefail
build=${1:?build dir}
out=${2:?output dir}
shift 2
mkdir -p "$out"
"$build/tests/bench/xlat_bench" "$@" | tee "$out/xlat.md"
