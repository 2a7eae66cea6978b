#!/bin/bash
# MatrixMul at 4x: the background pinner on, off, and pinning off; NVIDIA native and expert beside
source .device/setup.sh
mkdir -p /tmp/v; echo $PWD/build-gpu/icd/libvast.so > /tmp/v/vast.icd
run() { # label env...
  local label=$1; shift
  for r in w 1 2 3 4 5; do
    t=$(env "$@" timeout 60 build-gpu/samples/MatrixMul $MMARGS 2>&1 | grep -E "^time|time:" | head -1)
    echo "$label $r $t"
  done
}
V="OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/v VAST_BACKEND=NVIDIA VAST_DEVICE_MEMORY=83886080 VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc"
MMARGS="--platform VAST -n 4096 --rows 8192"
run vast4x $V
run vast4x-nobg $V VAST_PIN_BACKGROUND=0
run vast4x-nopin $V VAST_PIN=0
MMARGS="--platform NVIDIA -n 4096 --rows 8192 --partitioned --chunk 256"
run expert CUDA_CACHE_PATH=/tmp/cc
MMARGS="--platform VAST -n 4096 --rows 8192"
env $V VAST_TRACE=$OUT/mm-nobg.trace.json VAST_PIN_BACKGROUND=0 build-gpu/samples/MatrixMul $MMARGS | grep time
env $V VAST_TRACE=$OUT/mm-bg.trace.json build-gpu/samples/MatrixMul $MMARGS | grep time
