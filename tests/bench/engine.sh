#!/bin/bash
# The partitioned engine's table (issue: a streaming kernel and a matrix multiply 4x larger
# than the device budget): per run, mode, partitions, bytes moved each way and VAST's time in
# build / inspector / planning / transfers / kernels (VAST_STATS), against the same program
# with its data fitting (native platform and VAST direct) and against the pinned PCIe bound,
# all measured in this one run. Each program runs with 1 and with N launches (saxpy 10,
# MatrixMul 3): the first launch pays what later ones do not (pinning the backing stores,
# inspecting; a repeated launch reuses its plan). In-core speed is the application's own
# kernel on resident data (VAST direct, its kernel_s); whole-process times are printed too
# but vary by tens of ms from run to run (process start, first touches).
# Usage (GPU machine, after `source .device/setup.sh`):
#   tests/bench/engine.sh BUILD_DIR OUT_DIR [PCIE_GBS (default 55.3)]
# Writes OUT_DIR/engine.md (the tables) and OUT_DIR/engine.log (every command and its output);
# ICD mode as in samples/bench/run.sh: OCL_ICD_FILENAMES for the Khronos loader, OCL_ICD_VENDORS
# for ocl-icd. VAST_TRACE of the MatrixMul 4x run to OUT_DIR/matmul-4x.json.
set -uo pipefail
build=$(cd "${1:?build dir}" && pwd)
out=${2:?output dir}
pcie=${3:-55.3}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/engine.log
: > "$log"
vendors=$(mktemp -d)
trap 'rm -rf "$vendors"' EXIT
echo "$build/icd/libvast.so" > "$vendors/vast.icd"
native=${ENGINE_PLATFORM:-NVIDIA CUDA}
export VAST_BACKEND=${VAST_BACKEND:-NVIDIA}

# name | sample | args without the launch count | launch-count flag | N | data bytes
cases=(
    "saxpy|saxpy|-n 128M|--iterations|10|1024000000"
    "MatrixMul|MatrixMul|-n 4096 --rows 8192|--iterations|3|335544320"
)

# run LABEL ENV... -- SAMPLE ARGS...: the sample's time and VAST's stats line, as key=value.
run() {
    local label=$1; shift
    local -a envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    echo "### $label: ${envs[*]} $*" >> "$log"
    local text
    text=$(env "${envs[@]}" timeout -k 5 120 "$@" 2>&1)
    echo "$text" >> "$log"
    local t status stats
    t=$(echo "$text" | awk '/^time: / { print $2 }')
    status=$(echo "$text" | grep -qx PASS && echo PASS || echo FAIL)
    stats=$(echo "$text" | grep '^vast: stats: kernel=' | head -1 | sed 's/^vast: stats: //')
    echo "label=$label status=$status time_s=${t:-nan} $stats"
}

rows=()
launches=""
for c in "${cases[@]}"; do
    IFS='|' read -r name sample args iflag many data <<< "$c"
    launches+="$name=$many "
    budget=$((data / 4))
    for n in 1 "$many"; do
        # shellcheck disable=SC2086
        rows+=("$(run "$name:native:x$n" VAST_X=0 -- "$build/samples/$sample" --platform "$native" $args $iflag $n)")
        # shellcheck disable=SC2086
        rows+=("$(run "$name:vast-direct:x$n" OCL_ICD_VENDORS="$vendors" OCL_ICD_FILENAMES="$build/icd/libvast.so" VAST_STATS=1 -- \
            "$build/samples/$sample" --platform VAST $args $iflag $n)")
        # shellcheck disable=SC2086
        rows+=("$(run "$name:vast-paged:x$n" OCL_ICD_VENDORS="$vendors" OCL_ICD_FILENAMES="$build/icd/libvast.so" VAST_STATS=1 \
            VAST_FORCE_PAGED=1 -- "$build/samples/$sample" --platform VAST $args $iflag $n)")
        trace=()
        [ "$name" = MatrixMul ] && [ "$n" = 1 ] && trace=(VAST_TRACE="$out/matmul-4x.json")
        # shellcheck disable=SC2086
        rows+=("$(run "$name:vast-4x:x$n" OCL_ICD_VENDORS="$vendors" OCL_ICD_FILENAMES="$build/icd/libvast.so" VAST_STATS=1 \
            VAST_DEVICE_MEMORY="$budget" "${trace[@]}" -- "$build/samples/$sample" --platform VAST $args $iflag $n)")
    done
done

printf '%s\n' "${rows[@]}" | awk -v pcie="$pcie" -v many="$launches" '
function v(i, key) { return ((i, key) in F) ? F[i, key] : "-" }
{
    for (f = 1; f <= NF; f++) {
        eq = index($f, "=")
        if (eq) F[NR, substr($f, 1, eq - 1)] = substr($f, eq + 1)
    }
    row[F[NR, "label"]] = NR
}
END {
    print "## Runs (time: the sample'"'"'s timed region: writes, launches, read-back)"
    print ""
    print "| run | status | time s | mode | partitions | h2d GB | d2h GB | build s | inspector s | plan s | transfer s | kernel s | VAST total s | PCIe bound s | of bound |"
    print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= NR; i++) {
        h = v(i, "h2d_bytes") + 0; d = v(i, "d2h_bytes") + 0; bound = (h + d) / (pcie * 1e9)
        busy = v(i, "total_s") - v(i, "build_s")
        of = busy > 0 && h + d > 0 ? sprintf("%.0f%%", 100 * bound / busy) : "-"
        label = v(i, "label"); gsub(/:/, " ", label)
        printf "| %s | %s | %s | %s | %s | %.2f | %.2f | %s | %s | %s | %s | %s | %s | %.4f | %s |\n", label,
            v(i, "status"), v(i, "time_s"), v(i, "mode"), v(i, "partitions"), h / 1e9, d / 1e9, v(i, "build_s"),
            v(i, "inspector_s"), v(i, "plan_s"), v(i, "transfer_s"), v(i, "kernel_s"), v(i, "total_s"), bound, of
    }
    print ""
    print "of bound: the PCIe bound ((h2d + d2h) / " pcie " GB/s, one direction at a time) over VAST'"'"'s time"
    print "less build (VAST total s - build s)."
    print ""
    print "## Against in-core speed (VAST_STATS; the same data fitting the device: VAST direct, the application'"'"'s own kernel)"
    print ""
    print "| program | in-core kernel s/launch | 4x s/launch, first launch | 4x s/launch, N launches | 4x s/launch, later launches | first launch: in-core / 4x | N launches: in-core / 4x | later launches: in-core / 4x |"
    print "|---|---|---|---|---|---|---|---|"
    np = split(many, progs, " ")
    for (k = 1; k <= np; k++) {
        split(progs[k], pn, "="); p = pn[1]; x = "x" pn[2]; nl = pn[2] + 0
        ic = row[p ":vast-direct:" x] ? v(row[p ":vast-direct:" x], "kernel_s") / nl : 0
        i1 = row[p ":vast-4x:x1"]; iN = row[p ":vast-4x:" x]
        f1 = i1 ? v(i1, "total_s") - v(i1, "build_s") : 0
        fN = iN ? (v(iN, "total_s") - v(iN, "build_s")) / nl : 0
        lN = nl > 1 && iN && i1 ? (fN * nl - f1) / (nl - 1) : 0
        r1 = (f1 > 0) ? ic / f1 : 0; rN = (fN > 0) ? ic / fN : 0; rL = (lN > 0) ? ic / lN : 0
        printf "| %s (N = %d) | %.4f | %.4f | %.4f | %.4f | %.2f | %.2f | %.2f |\n", p, nl, ic, f1, fN, lN, r1, rN, rL
    }
    print ""
    print "4x s/launch: VAST'"'"'s time less building the paged and inspector programs (VAST total s - build s);"
    print "later launches: (N launches - first launch) / (N - 1), two processes of this run (a repeated launch"
    print "reuses its plan: no inspector)."
}' | tee "$out/engine.md"
