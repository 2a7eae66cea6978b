#!/bin/bash
# smoke.sh: run the benchmark harness on PoCL at the tiny preset and check what it wrote.
# usage: smoke.sh --build DIR --out DIR --libvast PATH --samples A,B --configs X,Y
# One timed run after one warm-up, warm caches (report.py's medians over repeats: test_report.py).
# Fails when run.sh fails, when a (sample, configuration, cache) row is missing from results.csv
# or results.md, when a run did not PASS, its hash differs from the reference, its timed runs
# are not 1 (the warm-up row must be left out),
# or when the checker itself cannot tell a missing row (it is run once on a copy with a row
# removed). Reduction's expert must be SKIPPED at the tiny size (its chunks are whole grids of
# 8 Mi elements, more than the data).
set -u
here=$(dirname "$(readlink -f "$0")")
root=$(readlink -f "$here/../../..")
build="" out="" libvast="" samples="" configs=""
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --libvast) libvast="$2"; shift 2 ;;
    --samples) samples="$2"; shift 2 ;;
    --configs) configs="$2"; shift 2 ;;
    *) echo "smoke: unknown option $1" >&2; exit 2 ;;
    esac
done
rm -rf "$out"
"$root/samples/bench/run.sh" --build "$build" --out "$out" --libvast "$libvast" \
    --platform Portable --cpu-platform "Portable Computing Language" --preset tiny \
    --samples "$samples" --configs "$configs" --timeout 60 --repeats 1 --warmup 1 --caches warm \
    || { echo "smoke: FAIL: run.sh exited $?"; exit 1; }
echo "--- results.md"
cat "$out/results.md"
echo "---"
check=(python3 "$here/check_results.py" --samples "$samples" --configs "$configs" --caches warm --repeats 1
       --skip-ok Reduction:expert)
"${check[@]}" "$out" || { echo "smoke: FAIL"; exit 1; }
# The checker must notice a missing row: drop the last data row of a copy and expect failure.
mkdir -p "$out/selftest"
head -n -1 "$out/results.csv" > "$out/selftest/results.csv"
cp "$out/results.md" "$out/selftest/"
if "${check[@]}" "$out/selftest" > "$out/selftest/log" 2>&1; then
    echo "smoke: FAIL: the checker accepted results.csv with a row removed"; exit 1
fi
echo "smoke: PASS"
