#!/bin/bash
# From the project root on the GPU machine, with its dependencies set up (.device/setup.sh);
# build-gpu-base: the library before the change, build-gpu: with it (both Release, VAST_TESTS=OFF).
set -u
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/v
args="-n 8192 --rows 65536 --check sample"
d=4563402752
run() { # build merged(0/1) trace
  local b=$1 m=$2 tr=$3 lib=$PWD/$1/icd/libvast.so
  echo $lib > /tmp/v/vast.icd
  local e=(); [ $m = 1 ] && e+=(VAST_MERGE_DEVICES=1); [ -n "$tr" ] && e+=(VAST_TRACE=$tr)
  env VAST_BACKEND="NVIDIA CUDA" OCL_ICD_FILENAMES=$lib OCL_ICD_VENDORS=/tmp/v VAST_STATS=1 VAST_DEVICE_MEMORY=$((d/8)) "${e[@]}" timeout 90 $b/samples/MatrixMul --platform VAST $args > /tmp/o.out 2> /tmp/o.err
  echo "$b merged=$m $(grep ^time /tmp/o.out) $(grep ^hash /tmp/o.out) $(grep -o 'total_s=[0-9.]*\|transfer_s=[0-9.]*' /tmp/o.err | tr '\n' ' ')"
}
for r in 1 2 3; do  # run 7: 1 2 3 4, with VAST_TRACE on round 4
  for b in build-gpu-base build-gpu; do
    tr=""; true
    run $b 1 "$tr"; run $b 0 ""
  done
done

