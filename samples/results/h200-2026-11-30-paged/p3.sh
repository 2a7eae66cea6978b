#!/bin/bash
# The change as it lands (build-gpu) against the code before (base, as in p1/p2) on one H200:
# MatrixMul -n 4096 --rows 8192 at 4x (budget 80 MiB) with the expert beside, and forced paged
# NBody with native beside, 5 rounds alternating after a warm-up.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a /tmp/b; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd; echo $PWD/.device/libvast-base.so > /tmp/b/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
lib() { case $1 in new) echo "OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a" ;; base) echo "OCL_ICD_FILENAMES=$PWD/.device/libvast-base.so OCL_ICD_VENDORS=/tmp/b" ;; esac; }
t() { grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' '; }
for r in w 1 2 3 4 5; do
  line="$r MatrixMul 4x expert: $(build-gpu/samples/MatrixMul --platform NVIDIA -n 4096 --rows 8192 --partitioned --chunk 256 | t)"
  for l in base new; do line+=" $l: $(env $(lib $l) VAST_DEVICE_MEMORY=83886080 build-gpu/samples/MatrixMul --platform VAST -n 4096 --rows 8192 | t)"; done
  line+=" | NBody paged native: $(build-gpu/samples/NBody --platform NVIDIA -n 131072 | t)"
  for l in base new; do line+=" $l: $(env $(lib $l) VAST_FORCE_PAGED=1 build-gpu/samples/NBody --platform VAST -n 131072 | t)"; done
  echo "$line"
done 2>&1 | tee $OUT/p3.txt
