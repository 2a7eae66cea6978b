#!/bin/bash
# pyopencl_upstream.sh: pyopencl's own test files (test_array, test_algorithm, test_clmath,
# test_wrapper, from a pyopencl source tree of the release Debian ships, 2022.3.1) run with
# Debian's python3-pyopencl directly on PoCL and through VAST at tight budgets, with a cold and a
# warm pyopencl binary cache. Prints the counts per file and configuration, and every test that
# fails through VAST but passes on PoCL; the closing line "N passed, N failed" counts
# (configuration, file) pairs with no such test. CI has no pyopencl source tree; run this by hand
# before resolving an issue that touches paging, translation, buffers or queues.
#
# usage: pyopencl_upstream.sh --src PYOPENCL_TREE --libvast PATH [--out DIR] [--files "a.py b.py"]
#        [--configs "pocl default 4M 4M-warm 256K"]
# Run time on a 2-core development machine: about 10 min per configuration.
set -u
src="" libvast="" out="" files="test_array.py test_algorithm.py test_clmath.py test_wrapper.py"
configs="pocl default 4M 4M-warm 256K 256K-warm"
while [ $# -gt 0 ]; do
    case "$1" in
    --src) src=$(readlink -f "$2"); shift 2 ;;
    --libvast) libvast=$(readlink -f "$2"); shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --files) files="$2"; shift 2 ;;
    --configs) configs="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "pyopencl_upstream: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -f "$src/test/test_array.py" ] || { echo "pyopencl_upstream: --src must hold test/test_array.py" >&2; exit 2; }
[ -f "$libvast" ] || { echo "pyopencl_upstream: --libvast PATH to libvast.so is required" >&2; exit 2; }
out=${out:-$(mktemp -d)}
mkdir -p "$out/vendors"
echo "$libvast" > "$out/vendors/vast.icd"
cp /etc/OpenCL/vendors/*pocl*.icd "$out/vendors/" 2>/dev/null
export LC_ALL=C POCL_CACHE_DIR=${POCL_CACHE_DIR:-$(mktemp -d)}

run() { # run CONFIG FILE: pytest's summary line; failed test ids in $out/CONFIG.FILE.failed
    local cfg=$1 f=$2 plat=VAST cache envs=()
    case "$cfg" in
    pocl) plat=portable ;;
    default) ;;
    4M*) envs=(VAST_DEVICE_MEMORY=4M) ;;
    256K*) envs=(VAST_DEVICE_MEMORY=256K VAST_PAGE_SIZE=4K) ;;
    esac
    # a warm configuration reuses the cache its cold twin (listed before it) filled
    case "$cfg" in *-warm) cache="$out/cache/${cfg%-warm}" ;; *) cache="$out/cache/$cfg"; rm -rf "$cache" ;; esac
    mkdir -p "$cache"
    (cd "$src/test" && env "${envs[@]}" OCL_ICD_VENDORS="$out/vendors" PYOPENCL_TEST="$plat" \
        XDG_CACHE_HOME="$cache" timeout 3000 /usr/bin/python3 -m pytest -q -rfEx -p no:cacheprovider "$f" \
        > "$out/$cfg.$f.log" 2>&1)
    # XFAIL counts as failed: pyopencl expects some tests to fail on PoCL by the platform's name
    # (test_image_3d: PoCL has no CL_ADDRESS_CLAMP), and through VAST the name is "VAST"
    grep -E '^(FAILED|ERROR|XFAIL) ' "$out/$cfg.$f.log" | awk '{print $2}' | sort -u > "$out/$cfg.$f.failed"
    tail -1 "$out/$cfg.$f.log"
}

passed=0 failed=0
for f in $files; do
    for cfg in $configs; do
        summary=$(run "$cfg" "$f")
        extra=""
        if [ "$cfg" != pocl ] && [ -f "$out/pocl.$f.failed" ]; then
            extra=$(comm -23 "$out/$cfg.$f.failed" "$out/pocl.$f.failed" | tr '\n' ' ')
            [ -z "$extra" ] && passed=$((passed + 1)) || failed=$((failed + 1))
        fi
        printf '%-10s %-20s %s\n' "$cfg" "$f" "$summary"
        [ -n "$extra" ] && printf '    fails only through VAST: %s\n' "$extra"
    done
done
echo "logs: $out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
