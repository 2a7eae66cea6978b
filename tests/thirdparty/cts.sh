#!/bin/bash
# cts.sh: the Khronos OpenCL conformance tests (OpenCL-CTS) directly on PoCL and through VAST in
# ICD mode, suite by suite, PoCL beside VAST. Builds the chosen suites from a CTS source tree
# (CMake, against Debian's ocl-icd libOpenCL), runs every test of a suite as its own process with
# a time limit (a hang or a crash costs one test, not the run), and prints a markdown table:
# suite x configuration, passed/failed/total and minutes, PoCL beside VAST, then per suite and
# configuration the tests that pass on PoCL and not through VAST, each with the first error line
# of its log. A suite/configuration pair is at parity when every test that passes on PoCL passes
# through VAST; the closing line counts pairs: "N passed, N failed". Exit 1 when one is not.
#
# usage: cts.sh --cts SRC_DIR --libvast PATH [--headers DIR] [--spirv-headers DIR] [--build DIR]
#               [--suites basic,api,...] [--configs pocl,direct,paged,16M] [--jobs N]
#               [--timeout S] [--max-rss MIB] [--only REGEX] [--skip REGEX] [--out DIR]
#   --headers: OpenCL headers (the folder holding CL/); default /usr/include. A current CTS
#     needs headers newer than Debian 12's (OpenCL-Headers of the CTS's date).
#   --spirv-headers: the folder holding include/spirv/unified1 (test_api includes spirv.hpp;
#     no SPIR-V tool is needed: suites that want spirv-as are not offered); default /usr.
#   --suites: basic api buffers events profiling mem_host_flags compiler multiples multiples2
#     (test_multiples with POCL_DEVICES="pthread pthread": two devices) thread_dimensions
#     allocations (single and multiple, 1 repetition, 4% of the device's memory) images (= the
#     image programs below, in wimpy mode: image_copy image_fill image_rw image_methods
#     image_samplerless image_info). Default: basic,api,buffers,events,profiling,mem_host_flags,
#     multiples,multiples2. compiler needs spirv-as on PATH at build time (Debian: spirv-tools).
#   --configs: pocl (directly, always run: the reference), direct (VAST, no variable),
#     paged (VAST_FORCE_PAGED=1), 16M (VAST_DEVICE_MEMORY=16M). Default: all four.
#   --timeout: seconds per test (default 600); --max-rss: kill a test whose resident memory
#     passes this many MiB (default 6144): a failure, "resident memory over ...".
#   --only/--skip: extended regexes on test names (e.g. to leave out a test known to hang).
#   --report-only: print the table of the results already in --out (of a run cut short).
# The harness sees every device of the first platform (CL_DEVICE_TYPE=all): for pocl the loader
# sees only the PoCL vendor file(s) of /etc/OpenCL/vendors, for VAST only a vast.icd naming
# --libvast (VAST finds PoCL itself), so VAST's platform is the one tested.
# Each configuration has its own POCL_CACHE_DIR (times are cold-cache for every one).
# Not in CTest: CI has no CTS source tree (see tests/thirdparty/CMakeLists.txt). Run times on a
# 2-core development machine: README.md, "Conformance (OpenCL-CTS)".
set -u
src="" headers=/usr/include spirv=/usr libvast="" build="" out="" jobs=2 timeout_s=600 max_rss=6144
suites="basic,api,buffers,events,profiling,mem_host_flags,multiples,multiples2"
configs="pocl,direct,paged,16M" only="" skip="" report_only=0
while [ $# -gt 0 ]; do
    case "$1" in
    --cts) src=$(readlink -f "$2"); shift 2 ;;
    --headers) headers=$(readlink -f "$2"); shift 2 ;;
    --spirv-headers) spirv=$(readlink -f "$2"); shift 2 ;;
    --libvast) libvast=$(readlink -f "$2"); shift 2 ;;
    --build) build=$(readlink -m "$2"); shift 2 ;;
    --suites) suites="$2"; shift 2 ;;
    --configs) configs="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --max-rss) max_rss="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --skip) skip="$2"; shift 2 ;;
    --out) out=$(readlink -m "$2"); shift 2 ;;
    --report-only) report_only=1; shift ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "cts: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done
die() { echo "cts: $*" >&2; exit 2; }
[ "$report_only" = 1 ] || [ -f "$src/test_conformance/CMakeLists.txt" ] || die "--cts SRC_DIR: an OpenCL-CTS source tree"
if [ "$report_only" = 0 ]; then
    [ -f "$libvast" ] || die "--libvast PATH to libvast.so is required"
    [ -f "$headers/CL/cl.h" ] || die "--headers DIR: no CL/cl.h in $headers"
    [ -f "$spirv/include/spirv/unified1/spirv.hpp" ] ||
        die "--spirv-headers DIR: no include/spirv/unified1/spirv.hpp in $spirv (Debian: spirv-headers)"
fi
export LC_ALL=C
out=${out:-$(mktemp -d)}
build=${build:-$out/build}
mkdir -p "$out" "$build"

# suite -> "target|program arguments|extra environment"
suite_def() {
    case "$1" in
    basic|api|buffers|events|profiling|mem_host_flags|compiler|thread_dimensions)
        echo "test_$1||" ;;
    multiples) echo "test_multiples||" ;;
    multiples2) echo "test_multiples||POCL_DEVICES=pthread pthread" ;;
    allocations) echo "test_allocations|single 1 4%|" ;;
    allocations_multiple) echo "test_allocations|multiple 1 4%|" ;;
    image_copy) echo "test_cl_copy_images|-w|" ;;
    image_fill) echo "test_cl_fill_images|-w|" ;;
    image_rw) echo "test_cl_read_write_images|-w|" ;;
    image_methods) echo "test_kernel_image_methods|-w|" ;;
    image_samplerless) echo "test_samplerless_reads|-w|" ;;
    image_info) echo "test_cl_get_info|-w|" ;;
    *) return 1 ;;
    esac
}
config_env() {
    case "$1" in
    pocl) echo "OCL_ICD_VENDORS=$out/vendors-pocl" ;;
    direct) echo "OCL_ICD_VENDORS=$out/vendors-vast" ;;
    paged) echo "OCL_ICD_VENDORS=$out/vendors-vast VAST_FORCE_PAGED=1" ;;
    16M) echo "OCL_ICD_VENDORS=$out/vendors-vast VAST_DEVICE_MEMORY=16M" ;;
    *) return 1 ;;
    esac
}
suite_list=() config_list=(pocl)
for s in ${suites//,/ }; do
    case "$s" in
    images) suite_list+=(image_copy image_fill image_rw image_methods image_samplerless image_info) ;;
    allocations) suite_list+=(allocations allocations_multiple) ;;
    compiler) command -v spirv-as >/dev/null || die "compiler: its build assembles SPIR-V: no spirv-as"
        suite_list+=("$s") ;;
    *) suite_def "$s" >/dev/null || die "unknown suite $s"; suite_list+=("$s") ;;
    esac
done
for c in ${configs//,/ }; do
    config_env "$c" >/dev/null || die "unknown configuration $c"
    [ "$c" = pocl ] || config_list+=("$c")
done

# the loader's view: PoCL alone, or VAST alone (a report of a run leaves them as they are: that
# run may still be going)
if [ "$report_only" = 0 ]; then
    mkdir -p "$out/vendors-pocl" "$out/vendors-vast"
    for f in /etc/OpenCL/vendors/*.icd; do
        grep -q vast "$f" || cp "$f" "$out/vendors-pocl/"
    done
    echo "$libvast" > "$out/vendors-vast/vast.icd"
fi

# build: configure once, then only the targets of the chosen suites
if [ "$report_only" = 1 ]; then :
elif [ ! -f "$build/CMakeCache.txt" ]; then
    libdir=$(dirname "$(readlink -f "$(ldconfig -p | awk '/libOpenCL\.so[^.]/ {print $NF; exit}')")")
    [ -d "$libdir" ] || die "no libOpenCL.so (Debian: ocl-icd-opencl-dev)"
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCL_INCLUDE_DIR="$headers" \
        -DCL_LIB_DIR="$libdir" -DOPENCL_LIBRARIES=OpenCL -DSPIRV_INCLUDE_DIR="$spirv" \
        > "$out/configure.log" 2>&1 || die "cmake configure failed: $out/configure.log"
fi
if [ "$report_only" = 0 ]; then
    targets=$(for s in "${suite_list[@]}"; do suite_def "$s" | cut -d'|' -f1; done | sort -u)
    t0=$(date +%s)
    # shellcheck disable=SC2086
    cmake --build "$build" -j "$jobs" --target $targets > "$out/build.log" 2>&1 ||
        die "CTS build failed: $out/build.log"
    echo "CTS built in $(( ($(date +%s) - t0) / 60 )) min: $targets" >&2
fi

# one test in one configuration, one process: writes $dir/$name.log and $dir/$name.res
# ("status seconds rc"); line-buffered, so a test killed at its limit leaves its last lines
run_config() {
    local name=$1 dir=$2 cfg_env=$3 log="$2/$1.log" t0 pid rc kids k rss over=0 status
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    ( exec env $cfg_env ${suite_env:+"$suite_env"} CL_DEVICE_TYPE=all \
        timeout -k 10 "$timeout_s" stdbuf -oL -eL "$bin" "$name" $args ) > "$log" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        kids=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null)
        for k in $kids; do
            rss=$(awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$k/status" 2>/dev/null)
            if [ "${rss:-0}" -gt "$max_rss" ]; then over=$rss; kill -KILL "$k"; fi
        done
        sleep 0.3
    done
    wait "$pid"; rc=$?
    [ -z "$(tail -c1 "$log")" ] || echo >> "$log"   # the cts: line below on a line of its own
    if [ "$over" -gt 0 ]; then
        status=fail; echo "cts: killed: resident memory over $max_rss MiB ($over MiB)" >> "$log"
    elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        status=fail; echo "cts: killed: no end after $timeout_s s" >> "$log"
    elif [ "$rc" -gt 128 ]; then
        status=fail; echo "cts: died of signal $((rc - 128))" >> "$log"
    elif [ "$rc" -ne 0 ]; then status=fail
    elif grep -qE "^$name passed|^PASSED" "$log"; then status=pass
    elif grep -qE "not supported|SKIPPED|[Ss]kipp" "$log"; then status=skip
    else status=pass; fi
    echo "$status $(echo "$(date +%s.%N) - $t0" | bc) $rc" > "$dir/$name.res"
}
# one test in every configuration, PoCL first (its kernel cache, shared by the configurations
# of a suite, is warm for VAST: the minutes compare execution more than compilation)
run_one() {
    local c
    for c in $config_names; do
        run_config "$1" "$suite_dir/$c" "$(config_env "$c")"
    done
}
export -f run_one run_config config_env
export timeout_s max_rss out

# first line of a failing log that says what went wrong (the harness's own summary lines and
# the test's progress lines left out); else the cts: line, else the last line
first_error() {
    local l
    l=$(grep -E 'ERROR|[Ee]rror|FAIL|[Ff]ailed|[Mm]ismatch|^vast: |Segmentation|Abort|[Aa]ssert|cts: ' \
        "$1" | grep -vE '^(PASSED|FAILED) [0-9]+ of|^FAILED [A-Za-z0-9_]+\.$' | head -1)
    [ -n "$l" ] || l=$(grep -m1 '^cts: ' "$1")
    [ -n "$l" ] || l=$(tail -1 "$1")
    echo "$l" | tr -d '\r' | sed "s|${src:-/nonexistent}/||g" | sed 's/|/\\|/g; s/^[[:space:]]*//' |
        cut -c1-200
}
# counts of a directory of .res files: "passed failed total"
counts() { cat "$1"/*.res 2>/dev/null | awk '{n++; p += $1 == "pass"; f += $1 == "fail"} END {print p+0, f+0, n+0}'; }

for s in "${suite_list[@]}"; do
    [ "$report_only" = 1 ] && break
    IFS='|' read -r target args suite_env <<< "$(suite_def "$s")"
    bin=$(find "$build" -type f -perm -u+x -name "$target" | head -1)
    [ -x "$bin" ] || die "no $target in $build"
    tests=$(env OCL_ICD_VENDORS="$out/vendors-pocl" CL_DEVICE_TYPE=all "$bin" --list 2>&1 |
        awk '/^\t[A-Za-z0-9_]+$/ {print $1}')
    [ -n "$only" ] && tests=$(echo "$tests" | grep -E "$only")
    [ -n "$skip" ] && tests=$(echo "$tests" | grep -vE "$skip")
    [ -n "$tests" ] || die "$s: no test listed by $bin --list"
    suite_dir="$out/$s" config_names="${config_list[*]}"
    export bin args suite_env suite_dir config_names
    for c in "${config_list[@]}"; do rm -rf "${suite_dir:?}/$c"; mkdir -p "$suite_dir/$c"; done
    mkdir -p "$suite_dir/pocl-cache"
    t0=$(date +%s)
    # shellcheck disable=SC2016
    echo "$tests" | POCL_CACHE_DIR="$suite_dir/pocl-cache" xargs -P "$jobs" -n1 bash -c 'run_one "$1"' _
    rm -rf "$suite_dir/pocl-cache"
    echo "cts: $s: $(( $(date +%s) - t0 )) s for every configuration" >&2
done

# the table, then what fails through VAST and passes on PoCL
parity=0 broken=0
# minutes: the sum of the tests' times in that configuration (each ran beside --jobs others)
minutes() { cat "$1"/*.res 2>/dev/null | awk '{t += $2} END {printf "%.1f", t / 60}'; }
echo "| suite | configuration | PoCL passed/failed/total | PoCL min | VAST passed/failed/total | VAST min | pass on PoCL, not through VAST |"
echo "|---|---|---|---|---|---|---|"
for s in "${suite_list[@]}"; do
    ref="$out/$s/pocl"
    for c in "${config_list[@]:1}"; do
        dir="$out/$s/$c" n=0
        if [ ! -d "$dir" ] || [ ! -d "$ref" ]; then continue; fi
        : > "$dir/regressions"
        for r in "$ref"/*.res; do
            t=$(basename "$r" .res)
            [ "$(cut -d' ' -f1 "$r")" = pass ] || continue
            [ -f "$dir/$t.res" ] || continue   # not run (a run cut short)
            v=$(cut -d' ' -f1 "$dir/$t.res")
            [ "$v" = pass ] && continue
            n=$((n + 1))
            if [ "$v" = skip ]; then echo "$t: skipped through VAST"
            else echo "$t: $(first_error "$dir/$t.log")"; fi >> "$dir/regressions"
        done
        [ "$n" -eq 0 ] && parity=$((parity + 1)) || broken=$((broken + 1))
        printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$s" "$c" "$(counts "$ref" | tr ' ' /)" \
            "$(minutes "$ref")" "$(counts "$dir" | tr ' ' /)" "$(minutes "$dir")" "$n"
    done
done
for s in "${suite_list[@]}"; do
    for c in "${config_list[@]:1}"; do
        [ -s "$out/$s/$c/regressions" ] || continue
        echo
        echo "$s, $c: pass on PoCL, not through VAST"
        sed 's/^/- /' "$out/$s/$c/regressions"
    done
done
echo
echo "logs: $out"
echo "$parity passed, $broken failed"
[ "$broken" -eq 0 ]
