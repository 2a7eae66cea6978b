#!/bin/bash
# The GPU machine's report: per-call overhead, then the benchmark harness (samples/bench/run.sh)
# over every sample in every configuration, VAST against the native NVIDIA platform and PoCL's
# CPU device in the same run.
# Usage (on the GPU machine, after `source .device/setup.sh`):
#   tests/bench/gpu_report.sh BUILD_DIR OUT_DIR [run.sh options, e.g. --preset paper --samples X,Y]
# Defaults: --platform "NVIDIA CUDA" --preset large --deadline 420 --timeout 240 (one command
# within the machine's 8-minute limit); later options override them. Writes OUT_DIR/overhead.md
# and the harness's OUT_DIR/raw.csv, results.{csv,md,png}, logs/ (samples/README.md).
set -uo pipefail
build=${1:?build dir}
out=${2:?output dir}
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
export VAST_BACKEND=${VAST_BACKEND:-NVIDIA}

if [ -z "${GPU_REPORT_NO_OVERHEAD:-}" ] && [ -x "$build/tests/bench/vast_overhead" ]; then
    echo "## Per-call overhead (ns; launch in us)"
    "$root/tests/bench/overhead.sh" "$build" NVIDIA 1 2>&1 | tee "$out/overhead.md"
    echo
fi

"$root/samples/bench/run.sh" --build "$build" --out "$out" --platform "NVIDIA CUDA" \
    --cpu-platform "Portable Computing Language" --preset large --deadline 420 --timeout 240 "$@"
status=$?
# The short table last (from raw.csv: python3 may be missing here): time and hash vs native.
if [ -f "$out/raw.csv" ]; then
    echo
    echo "## Summary"
    awk 'NR == 1 { n = split($0, h, ","); for (i = 1; i <= n; i++) col[h[i]] = i; next }
        { line = substr($0, 2, length($0) - 2); split(line, f, /","/)
          s = f[col["sample"]]; c = f[col["config"]]; hash = f[col["hash"]]
          if (c == "native" && f[col["status"]] == "PASS") ref[s] = hash
          same = hash == "" || !(s in ref) ? "-" : hash == ref[s] ? "same" : "DIFFERS"
          printf "%-16s %-12s %-8s %10s s  hash %s\n", s, c, f[col["status"]], f[col["time_s"]], same }' "$out/raw.csv"
fi
exit "$status"
