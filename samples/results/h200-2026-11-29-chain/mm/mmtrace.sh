#!/bin/bash
source .device/setup.sh
mkdir -p /tmp/v; echo $PWD/build-gpu/icd/libvast.so > /tmp/v/vast.icd
V="OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/v VAST_BACKEND=NVIDIA VAST_DEVICE_MEMORY=83886080 VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc"
for i in 1 2 3; do env $V build-gpu/samples/MatrixMul --platform VAST -n 4096 --rows 8192 | grep time; done
env $V VAST_TRACE=$OUT/mm.trace.json build-gpu/samples/MatrixMul --platform VAST -n 4096 --rows 8192 | grep time
