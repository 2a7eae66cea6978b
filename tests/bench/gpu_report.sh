#!/bin/bash
# The GPU machine's report: per-call overhead, then the benchmark harness (samples/bench/run.sh)
# over every sample in every configuration, VAST against the native NVIDIA platform and PoCL's
# CPU device in the same run, each configuration with its warm-up and 3 timed repeats.
# Usage (on the GPU machine, after `source .device/setup.sh`):
#   tests/bench/gpu_report.sh BUILD_DIR OUT_DIR [--part K/M] [run.sh options]
# Defaults: --platform "NVIDIA CUDA" --preset large --repeats 3 --warmup 1 --caches warm
# --deadline 500 --timeout 240; later options override them. One command must end within the
# machine's 10-minute limit: the large preset with 3 repeats takes about 25 minutes, so run it
# in parts into the same OUT_DIR, one command each (rows append to raw.csv; each part's report
# covers every part so far):
#   for k in 1 2 3 4 5; do tests/bench/gpu_report.sh build-gpu OUT --part $k/5; done
# (--caches cold,warm doubles the time: --part K/10). The overhead table is measured in the
# first part only (or without --part; GPU_REPORT_NO_OVERHEAD=1: never). What a part's
# --deadline cuts off becomes SKIPPED rows (harness deadline): rerun those samples with
# --samples into the same folder. Writes OUT_DIR/overhead.md and the harness's
# OUT_DIR/raw.csv, results.{csv,md,png}, logs/ (samples/README.md).
set -uo pipefail
build=${1:?build dir}
out=${2:?output dir}
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
export VAST_BACKEND=${VAST_BACKEND:-NVIDIA}

first_part=1
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    if [ "${args[i]}" = --part ] && [[ "${args[i + 1]:-}" != 1/* ]]; then first_part=0; fi
done

if [ -z "${GPU_REPORT_NO_OVERHEAD:-}" ] && [ "$first_part" = 1 ] && [ -x "$build/tests/bench/vast_overhead" ]; then
    echo "## Per-call overhead (ns; launch in us)"
    "$root/tests/bench/overhead.sh" "$build" NVIDIA 1 2>&1 | tee "$out/overhead.md"
    echo
fi

"$root/samples/bench/run.sh" --build "$build" --out "$out" --platform "NVIDIA CUDA" \
    --cpu-platform "Portable Computing Language" --preset large --repeats 3 --warmup 1 --caches warm \
    --deadline 500 --timeout 240 "$@"
status=$?
# The short table last (from raw.csv: python3 may be missing here): the median of the timed
# runs per sample, size, configuration and cache mode, and every hash against native's.
if [ -f "$out/raw.csv" ]; then
    echo
    echo "## Summary (median of the timed runs; hash: all repeats against native's)"
    awk 'NR == 1 { n = split($0, h, ","); for (i = 1; i <= n; i++) col[h[i]] = i; next }
        { line = substr($0, 2, length($0) - 2); split(line, f, /","/)
          if (f[col["warmup"]] == "yes") next
          k = f[col["sample"]] SUBSEP f[col["size_args"]] SUBSEP f[col["cache"]] SUBSEP f[col["config"]]
          if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
          runs[k]++
          if (f[col["status"]] == "PASS") { t[k, ++np[k]] = f[col["time_s"]]; hs[k] = hs[k] " " f[col["hash"]] }
          else bad[k] = f[col["status"]]
          if (f[col["config"]] == "native" && f[col["status"]] == "PASS")
              ref[f[col["sample"]] SUBSEP f[col["size_args"]]] = f[col["hash"]] }
        END {
          for (j = 1; j <= nk; j++) {
              k = order[j]; split(k, p, SUBSEP); m = np[k] + 0
              for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (t[k, b] + 0 < t[k, a] + 0) { x = t[k, a]; t[k, a] = t[k, b]; t[k, b] = x }
              med = m == 0 ? "-" : m % 2 ? t[k, (m + 1) / 2] : sprintf("%.6f", (t[k, m / 2] + t[k, m / 2 + 1]) / 2)
              r = ref[p[1] SUBSEP p[2]]; same = "-"
              if (r != "" && hs[k] != "") { same = "same"; n = split(hs[k], hh, " "); for (a = 1; a <= n; a++) if (hh[a] != r) same = "DIFFERS" }
              printf "%-16s %-28s %-9s %-12s %d/%d PASS%s %10s s  hash %s\n", p[1], p[2], p[3], p[4], m, runs[k],
                     bad[k] != "" ? " (" bad[k] ")" : "", med, same }
        }' "$out/raw.csv"
fi
exit "$status"
