#!/bin/bash
# The library as it lands after t2 and t3 (clBuildProgram prepares the device for paged
# launches where VAST_BUILD_WAIT builds; host copies split from 1 MiB) against base (9ab141a):
# forced paged NBody, MatrixMul and MedianFilter of the large preset with native beside, and
# MatrixMul 4096 x 8192 at 4x with the expert beside, 3 rounds alternating after a warm-up.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a /tmp/b; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd; echo $PWD/.device/libvast-base.so > /tmp/b/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA CUDA_VISIBLE_DEVICES=0
lib() { case $1 in new) echo "OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a" ;; base) echo "OCL_ICD_FILENAMES=$PWD/.device/libvast-base.so OCL_ICD_VENDORS=/tmp/b" ;; esac; }
t() { grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' '; }
for r in w 1 2 3; do
  while read -r s args; do
    line="$r $s paged native: $(build-gpu/samples/$s --platform NVIDIA $args | t)"
    for l in base new; do line+=" $l: $(env $(lib $l) VAST_FORCE_PAGED=1 build-gpu/samples/$s --platform VAST $args | t)"; done
    echo "$line"
  done <<< "NBody -n 131072
MatrixMul -n 4096 --rows 8192
MedianFilter --width 8192 --height 8192"
  line="$r MatrixMul 4x expert: $(build-gpu/samples/MatrixMul --platform NVIDIA -n 4096 --rows 8192 --partitioned --chunk 256 | t)"
  for l in base new; do line+=" $l: $(env $(lib $l) VAST_DEVICE_MEMORY=83886080 build-gpu/samples/MatrixMul --platform VAST -n 4096 --rows 8192 | t)"; done
  echo "$line"
done 2>&1 | tee $OUT/t4.txt
