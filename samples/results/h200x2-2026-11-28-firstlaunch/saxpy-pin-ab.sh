#!/bin/bash
# From the project root on the GPU machine, with its dependencies set up (.device/setup.sh);
# build-gpu-base: the library before the change, build-gpu: with it (both Release, VAST_TESTS=OFF).
# First launch over the application's memory (USE_HOST_PTR), 4x: transfers waiting for pins (base) or staging (new).
set -u
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/v
n=1073741825
for r in 1 2 3; do
  for b in build-gpu-base build-gpu; do
    lib=$PWD/$b/icd/libvast.so; echo $lib > /tmp/v/vast.icd
    env VAST_BACKEND="NVIDIA CUDA" OCL_ICD_FILENAMES=$lib OCL_ICD_VENDORS=/tmp/v VAST_STATS=1 VAST_DEVICE_MEMORY=2G timeout 120 $b/samples/saxpy --platform VAST -n $n --host-ptr 1 --iterations 1 --check sample > /tmp/o.out 2> /tmp/o.err
    echo "$b r$r $(grep ^time /tmp/o.out) $(grep ^hash /tmp/o.out) $(grep -o 'kernel=saxpy.*partitions=[0-9]*\|transfer_s=[0-9.]*\|total_s=[0-9.]*' /tmp/o.err | tr '\n' ' ')"
  done
done
