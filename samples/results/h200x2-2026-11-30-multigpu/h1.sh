#!/bin/bash
# Issue 17 on one GPU of the machine: the device's scratch frame made once (new) against one per
# paged launch (base: 9ab141a), forced paged, VAST's and NVIDIA's compile caches warm: NBody
# -n 131072 and MatrixMul -n 4096 --rows 8192 with native beside, 5 rounds alternating after a
# warm-up. Then NVIDIA's compile cache cold (a fresh CUDA_CACHE_PATH for every run) and VAST's
# warm: NBody, MatrixMul and MedianFilter of the large preset, native, base (the paged variants
# built in the background) and new (VAST_BUILD_WAIT's default with VAST_FORCE_PAGED=1: inside
# clBuildProgram), 3 rounds.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a /tmp/b; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd; echo $PWD/.device/libvast-base.so > /tmp/b/vast.icd
export VAST_CACHE_DIR=/tmp/vc VAST_BACKEND=NVIDIA CUDA_VISIBLE_DEVICES=0
lib() { case $1 in new) echo "OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a" ;; base) echo "OCL_ICD_FILENAMES=$PWD/.device/libvast-base.so OCL_ICD_VENDORS=/tmp/b" ;; esac; }
t() { grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' '; }
W="NBody -n 131072
MatrixMul -n 4096 --rows 8192
MedianFilter --width 8192 --height 8192"
for r in w 1 2 3 4 5; do
  while read -r s args; do
    line="$r $s warm native: $(CUDA_CACHE_PATH=/tmp/cc build-gpu/samples/$s --platform NVIDIA $args | t)"
    for l in base new; do line+=" $l: $(env $(lib $l) CUDA_CACHE_PATH=/tmp/cc VAST_FORCE_PAGED=1 build-gpu/samples/$s --platform VAST $args | t)"; done
    echo "$line"
  done <<< "$W"
done 2>&1 | tee $OUT/h1-warm.txt
n=0
for r in 1 2 3; do
  while read -r s args; do
    n=$((n+1))
    line="$r $s cold native: $(CUDA_CACHE_PATH=/tmp/cold$n-n build-gpu/samples/$s --platform NVIDIA $args | t)"
    for l in base new; do line+=" $l: $(env $(lib $l) CUDA_CACHE_PATH=/tmp/cold$n-$l VAST_FORCE_PAGED=1 build-gpu/samples/$s --platform VAST $args | t)"; done
    echo "$line"
  done <<< "$W"
done 2>&1 | tee $OUT/h1-cold.txt
