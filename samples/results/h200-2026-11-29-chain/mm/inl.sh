#!/bin/bash
# large non-blocking writes off the application's thread: HEAD against the new library, alternating
source .device/setup.sh
mkdir -p /tmp/v
declare -A ARGS=([MatrixMul]="-n 4096 --rows 8192" [saxpy]="-n 128M --iterations 10" [BlackScholes]="-n 64M --iterations 4" [vecadd]="-n 128M")
declare -A MEM=([MatrixMul]=83886080 [saxpy]=256000000 [BlackScholes]=320000000 [vecadd]=384000000)
for s in MatrixMul saxpy BlackScholes vecadd; do
  for r in w 1 2 3 4 5; do
    for lib in $PWD/libvast-head.so $PWD/build-gpu/icd/libvast.so; do
      echo $lib > /tmp/v/vast.icd
      t=$(env OCL_ICD_FILENAMES=$lib OCL_ICD_VENDORS=/tmp/v VAST_BACKEND=NVIDIA VAST_DEVICE_MEMORY=${MEM[$s]} VAST_CACHE_DIR=/tmp/vc-$(basename $lib) CUDA_CACHE_PATH=/tmp/cc build-gpu/samples/$s --platform VAST ${ARGS[$s]} | grep -E "^time|hash" | tr '\n' ' ')
      echo "$s $r $(basename $lib) $t"
    done
  done
done
