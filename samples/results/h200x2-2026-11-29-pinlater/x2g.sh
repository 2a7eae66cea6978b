#!/bin/bash
# Traced, with the application's host commands on the trace's host track: MatrixMul -n 4096
# --rows 8192 at 4x (80 MiB) and saxpy -n 128M --iterations 10 at 4x (256 MB), stores of
# VAST's own pinned at first use (A: build-gpu) and at creation (B: .device/libvast-base.so,
# the same code with pin_later always false), two rounds after a warm-up, alternating.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a /tmp/b; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd; echo $PWD/.device/libvast-base.so > /tmp/b/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
declare -A ARGS=([MatrixMul]="-n 4096 --rows 8192" [saxpy]="-n 128M --iterations 10")
declare -A MEM=([MatrixMul]=83886080 [saxpy]=256000000)
pol() { case $1 in A) echo "OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a" ;;
                   B) echo "OCL_ICD_FILENAMES=$PWD/.device/libvast-base.so OCL_ICD_VENDORS=/tmp/b" ;; esac; }
for s in MatrixMul saxpy; do
  for r in w 1 2; do
    line="$s $r"
    for p in A B; do
      t=(); [ $r != w ] && t=(VAST_TRACE=$OUT/$s-$p$r.json)
      line+=" $p: $(env $(pol $p) "${t[@]}" VAST_DEVICE_MEMORY=${MEM[$s]} build-gpu/samples/$s --platform VAST ${ARGS[$s]} | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
    done
    echo "$line"
  done
done 2>&1 | tee $OUT/traced.txt
