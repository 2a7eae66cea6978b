#!/bin/bash
# VAST's persistent kernel cache (issue 17, item 1): the first launch's cost with VAST's cache
# cold (a fresh VAST_CACHE_DIR: translate, build the paged and inspector programs from source)
# and warm (the same folder again: load the translation and the real binaries). Per case and
# repeat: one cold process, then one warm process on its folder; the table gives medians (and
# min-max) of VAST's time translating and building (the `cache` line of VAST_STATS, build_s),
# the first kernel's build_s and the sample's own time (first write to last read).
# Usage:
#   tests/bench/kcache.sh BUILD_DIR [--platform NAME] [--reps N] [--cold-driver] [--log FILE]
#     --platform     the real platform VAST wraps (VAST_BACKEND: a platform-name substring,
#                    e.g. NVIDIA, Portable); default: VAST's own choice
#     --reps         repeats per case (default 3)
#     --cold-driver  every process gets a fresh driver compile cache too (POCL_CACHE_DIR,
#                    CUDA_CACHE_PATH), so the driver's own cache cannot hide a build; default:
#                    the driver's cache as the environment has it (say which in a report)
#     --log          every command and its output (default: a temporary file, removed)
# ICD mode as in engine.sh: OCL_ICD_VENDORS for ocl-icd, OCL_ICD_FILENAMES for the Khronos loader.
set -uo pipefail
build=$(cd "${1:?build dir}" && pwd); shift
platform="" reps=3 cold_driver=0 log=""
while [ $# -gt 0 ]; do
    case "$1" in
    --platform) platform="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --cold-driver) cold_driver=1; shift ;;
    --log) log="$2"; shift 2 ;;
    *) echo "kcache.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$log" ] || log=$tmp/log
: > "$log"
mkdir -p "$tmp/vendors"
echo "$build/icd/libvast.so" > "$tmp/vendors/vast.icd"
[ -n "$platform" ] && export VAST_BACKEND="$platform"

# name | sample and arguments | VAST environment (forced paged, or partitioned with the inspector)
cases=(
    "vecadd paged|vecadd -n 1000003|VAST_FORCE_PAGED=1"
    "MatrixMul paged|MatrixMul -n 512|VAST_FORCE_PAGED=1"
    "BlackScholes paged|BlackScholes -n 1000003|VAST_FORCE_PAGED=1"
    "SpMV partitioned|SpMV --rows 20011 --width 16 --cols 30011|VAST_DEVICE_MEMORY=1M VAST_PAGE_SIZE=4K"
)

# run CACHE_DIR ENV SAMPLE ARGS...: "cache_build_s kernel_build_s time_s hits" of one process
run() {
    local dir=$1 envs=$2; shift 2
    local drv=()
    if [ "$cold_driver" = 1 ]; then
        local d; d=$(mktemp -d "$tmp/driver.XXXXXX")
        drv=(POCL_CACHE_DIR="$d" CUDA_CACHE_PATH="$d")
    fi
    echo "### VAST_CACHE_DIR=$dir $envs ${drv[*]} $*" >> "$log"
    local text
    # shellcheck disable=SC2086
    text=$(env -u LD_PRELOAD OCL_ICD_VENDORS="$tmp/vendors" OCL_ICD_FILENAMES="$build/icd/libvast.so" \
           VAST_CACHE_DIR="$dir" VAST_STATS=1 $envs "${drv[@]}" timeout -k 5 300 \
           "$build/samples/$1" --platform VAST "${@:2}" 2>&1)
    echo "$text" >> "$log"
    echo "$text" | grep -qx PASS || { echo "kcache.sh: FAIL: $* (see the log)" >&2; echo "nan nan nan -"; return; }
    local cache kernel t hits
    cache=$(echo "$text" | sed -n 's/^vast: stats: cache=.* build_s=\([0-9.]*\).*/\1/p')
    kernel=$(echo "$text" | sed -n 's/^vast: stats: kernel=.* build_s=\([0-9.]*\) .*/\1/p' | head -1)
    t=$(echo "$text" | awk '/^time: / { print $2 }')
    hits=$(echo "$text" | sed -n 's/^vast: stats: cache=.* translation_hits=\([0-9]*\) translations=\([0-9]*\) binary_hits=\([0-9]*\) source_builds=\([0-9]*\).*/t\1+\2 b\3+\4/p')
    echo "${cache:-nan} ${kernel:-nan} ${t:-nan} ${hits:--}"
}

# med VALUES...: "median (min-max)"
med() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.4f (%.4f-%.4f)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

device=$(env OCL_ICD_VENDORS="$tmp/vendors" OCL_ICD_FILENAMES="$build/icd/libvast.so" "$build/samples/vecadd" \
         --platform VAST -n 1000 2>/dev/null | sed -n 's/^device: //p')
echo "kcache.sh: device '$device', $reps repeats, driver cache $([ $cold_driver = 1 ] && echo 'fresh per process' || echo 'as the environment has it')"
echo
echo "| case | VAST build s, cold | VAST build s, warm | sample s, cold | sample s, warm | hits/misses cold; warm |"
echo "|---|---|---|---|---|---|"
for c in "${cases[@]}"; do
    IFS='|' read -r name cmd envs <<< "$c"
    cb=() wb=() ct=() wt=() h=""
    for ((r = 0; r < reps; r++)); do
        dir=$(mktemp -d "$tmp/cache.XXXXXX")
        # shellcheck disable=SC2086
        read -r c1 _ c3 c4 <<< "$(run "$dir" "$envs" $cmd)"
        # shellcheck disable=SC2086
        read -r w1 _ w3 w4 <<< "$(run "$dir" "$envs" $cmd)"
        cb+=("$c1"); ct+=("$c3"); wb+=("$w1"); wt+=("$w3")
        h="$c4; $w4"
    done
    echo "| $name | $(med "${cb[@]}") | $(med "${wb[@]}") | $(med "${ct[@]}") | $(med "${wt[@]}") | $h |"
done
echo
echo "(hits: t<translation hits>+<translations> b<binary hits>+<source builds>)"
