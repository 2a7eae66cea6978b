#!/bin/bash
# Pages a partition overwrites (issue 17 item 2): host-to-device bytes and time of saxpy and
# MatrixMul at 2x and 4x oversubscription (VAST_DEVICE_MEMORY = data / 2, data / 4), with the
# pages their kernels overwrite loaded as before (VAST_SKIP_OVERWRITTEN=0) and given frames
# without a load (=1, the default), each configuration R times (median time, min-max spread),
# after one warm-up run of each (not counted), in the order off, on, off, on, ... so that
# neither warms the other's runs more.
# saxpy's y = a * x + y reads y: it loads the same before and after (the control); MatrixMul's
# C is write-only: its bytes leave the host-to-device column.
# Usage: tests/bench/overwrite.sh BUILD_DIR [BACKEND (VAST_BACKEND; default: VAST's own choice)] [R (default 3)]
#   size: OVERWRITE_SAXPY_N (default 8000000 elements), OVERWRITE_MM_N / OVERWRITE_MM_ROWS
#   (default 1024 / 2048); on a GPU, e.g. 128000000 and 4096 / 8192 (tests/bench/engine.sh's).
# Prints one line per run (key=value) and a table; the VAST_STATS line of each run is in the log
# next to it (OUT: mktemp, printed).
set -uo pipefail
build=$(cd "${1:?build dir}" && pwd)
backend=${2:-}
reps=${3:-3}
sn=${OVERWRITE_SAXPY_N:-8000000}
mn=${OVERWRITE_MM_N:-1024}
mr=${OVERWRITE_MM_ROWS:-2048}
vendors=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$vendors"' EXIT
echo "$build/icd/libvast.so" > "$vendors/vast.icd"
for f in /etc/OpenCL/vendors/*.icd; do
    [ -e "$f" ] && ! grep -q libvast "$f" && cp "$f" "$vendors/"
done
[ -n "$backend" ] && export VAST_BACKEND=$backend
# name | sample and arguments | data bytes
cases=(
    "saxpy|saxpy -n $sn --iterations 1|$((8 * sn))"
    "MatrixMul|MatrixMul -n $mn --rows $mr --iterations 1|$((4 * (2 * mr * mn + mn * mn)))"
)

run() { # LABEL SKIP BUDGET SAMPLE ARGS...
    local label=$1 skip=$2 budget=$3; shift 3
    echo "### $label VAST_SKIP_OVERWRITTEN=$skip VAST_DEVICE_MEMORY=$budget $*" >> "$log"
    local text
    text=$(OCL_ICD_VENDORS="$vendors" OCL_ICD_FILENAMES="$build/icd/libvast.so" VAST_STATS=1 \
        VAST_SKIP_OVERWRITTEN="$skip" VAST_DEVICE_MEMORY="$budget" timeout -k 5 600 \
        "$build/samples/$1" --platform VAST "${@:2}" 2>&1)
    echo "$text" >> "$log"
    local t status h2d parts
    t=$(echo "$text" | awk '/^time: / { print $2 }')
    status=$(echo "$text" | grep -qx PASS && echo PASS || echo FAIL)
    h2d=$(echo "$text" | grep '^vast: stats: kernel=' | head -1 | sed -n 's/.* h2d_bytes=\([0-9]*\).*/\1/p')
    parts=$(echo "$text" | grep '^vast: stats: kernel=' | head -1 | sed -n 's/.* partitions=\([0-9]*\).*/\1/p')
    echo "label=$label skip=$skip status=$status time_s=${t:-nan} h2d_bytes=${h2d:-nan} partitions=${parts:-nan}"
}

rows=()
for c in "${cases[@]}"; do
    IFS='|' read -r name cmd data <<< "$c"
    for over in 2 4; do
        for skip in 0 1; do # warm-up (PoCL's and VAST's kernel caches), not counted
            # shellcheck disable=SC2086
            run "$name:${over}x:warm-up" "$skip" $((data / over)) $cmd > /dev/null
        done
        for ((k = 0; k < reps; k++)); do
            for skip in 0 1; do
                # shellcheck disable=SC2086
                rows+=("$(run "$name:${over}x" "$skip" $((data / over)) $cmd)")
                echo "${rows[-1]}"
            done
        done
    done
done
echo "log: $log"
echo
printf '%s\n' "${rows[@]}" | awk '
{
    for (f = 1; f <= NF; f++) { eq = index($f, "="); if (eq) F[substr($f, 1, eq - 1)] = substr($f, eq + 1) }
    k = F["label"] SUBSEP F["skip"]
    if (!(k in n)) { order[++m] = k }
    n[k]++; t[k, n[k]] = F["time_s"] + 0; h[k] = F["h2d_bytes"]; p[k] = F["partitions"]
    if (F["status"] != "PASS") bad[k] = 1
}
function median(k,   i, j, x, c) {
    c = n[k]
    for (i = 1; i <= c; i++) s[i] = t[k, i]
    for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (s[j] < s[i]) { x = s[i]; s[i] = s[j]; s[j] = x }
    lo = s[1]; hi = s[c]
    return c % 2 ? s[(c + 1) / 2] : (s[c / 2] + s[c / 2 + 1]) / 2
}
END {
    print "| run | overwritten pages | status | partitions | h2d MB | time s (median) | min-max |"
    print "|---|---|---|---|---|---|---|"
    for (i = 1; i <= m; i++) {
        k = order[i]; split(k, kk, SUBSEP); md = median(k)
        printf "| %s | %s | %s | %s | %.1f | %.3f | %.3f-%.3f |\n", kk[1], kk[2] ? "not loaded" : "loaded",
            (k in bad) ? "FAIL" : "PASS", p[k], h[k] / 1e6, md, lo, hi
    }
}'
