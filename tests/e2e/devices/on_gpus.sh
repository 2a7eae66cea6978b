#!/bin/bash
# on_gpus.sh: the several-device cases of test_devices (the CTest entries e2e.devices.*) against
# a real platform with two or more devices, e.g. NVIDIA's OpenCL on a machine with two GPUs:
# VAST wraps that platform and every case is compared with it directly, byte for byte.
#
# usage: on_gpus.sh LIBVAST TEST_DEVICES [NATIVE_NAME]   (NATIVE_NAME: a substring of the real
# platform's name, NVIDIA by default). Prints one line per configuration and case; exits 1 if
# any case failed. Build TEST_DEVICES with: gcc -O2 -o test_devices test_devices.c -lOpenCL
set -u
lib=$(readlink -f "$1") bin=$2 native=${3:-NVIDIA}
icd=$(mktemp -d)
trap 'rm -rf "$icd"' EXIT
cp /etc/OpenCL/vendors/*.icd "$icd"/
echo "$lib" >"$icd/vast.icd"
# OCL_ICD_VENDORS for ocl-icd; OCL_ICD_FILENAMES (every library, VAST's first) for the Khronos
# loader that CUDA ships, which then reads no vendors folder.
files=$lib
for f in /etc/OpenCL/vendors/*.icd; do files+=":$(cat "$f")"; done
export OCL_ICD_VENDORS=$icd OCL_ICD_FILENAMES=$files VAST_BACKEND=$native
cases=issue,busy,ooo,halves,pingpong,hostio,fromtype,buildlist,subbuf,subdevices
fail=0
run() { # name, env..., -- args
    local name=$1
    shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    local t0=$(date +%s%N)
    env "${envs[@]}" "$bin" --native "$native" "$@" >"$icd/out" 2>&1
    local rc=$? t1=$(date +%s%N)
    printf '%-12s rc %d  %5d ms  %s\n' "$name" $rc $(((t1 - t0) / 1000000)) \
        "$(grep -c '^ok' "$icd/out") ok, $(grep -c '^FAIL' "$icd/out") failed"
    [ $rc = 0 ] || { fail=1; sed 's/^/    /' "$icd/out" | tail -20; }
}
run direct -- --only $cases
run 1M_4K VAST_DEVICE_MEMORY=1M VAST_PAGE_SIZE=4K -- --only $cases
run forced VAST_FORCE_PAGED=1 -- --only $cases
run halves_64K VAST_PAGE_SIZE=64K -- --only halves,issue
run halves_2M VAST_PAGE_SIZE=2M -- --only halves,issue
# The comparison can fail: one flipped byte of VAST's output must be seen.
if "$bin" --native "$native" --only issue --flip >"$icd/out" 2>&1 || ! grep -q '^FAIL issue' "$icd/out"; then
    echo "can_fail     the comparison did not see a flipped byte"
    fail=1
else
    echo "can_fail     a flipped byte is seen (as it must be)"
fi
exit $fail
