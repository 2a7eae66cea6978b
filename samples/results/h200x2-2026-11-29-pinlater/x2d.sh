#!/bin/bash
# Stores of VAST's own pinned at their first use (A: build-gpu) against pinned at creation (B:
# .device/libvast-base.so, the same code before), both with pin domains; alternating, after a
# warm-up. One GPU: MatrixMul -n 4096 --rows 8192 and saxpy -n 128M --iterations 10 at 4x with
# the expert beside, 4 rounds. Two GPUs: multigpu.sh's compute preset MatrixMul at 4x, 2 rounds.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a /tmp/b /tmp/bB; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd; echo $PWD/.device/libvast-base.so > /tmp/b/vast.icd
cp -r build-gpu/. /tmp/bB/ && cp .device/libvast-base.so /tmp/bB/icd/libvast.so
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc
declare -A ARGS=([MatrixMul]="-n 4096 --rows 8192" [saxpy]="-n 128M --iterations 10")
declare -A CHUNK=([MatrixMul]=256 [saxpy]=16000000)
declare -A MEM=([MatrixMul]=83886080 [saxpy]=256000000)
for s in MatrixMul saxpy; do
  for r in w 1 2 3 4; do
    e=$(build-gpu/samples/$s --platform NVIDIA ${ARGS[$s]} --partitioned --chunk ${CHUNK[$s]} | grep -E "^time" | tr '\n' ' ')
    a=$(env OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a VAST_BACKEND=NVIDIA VAST_DEVICE_MEMORY=${MEM[$s]} build-gpu/samples/$s --platform VAST ${ARGS[$s]} | grep -E "^time|^hash" | tr '\n' ' ')
    b=$(env OCL_ICD_FILENAMES=$PWD/.device/libvast-base.so OCL_ICD_VENDORS=/tmp/b VAST_BACKEND=NVIDIA VAST_DEVICE_MEMORY=${MEM[$s]} build-gpu/samples/$s --platform VAST ${ARGS[$s]} | grep -E "^time|^hash" | tr '\n' ' ')
    echo "$s $r expert: $e | A later: $a | B creation: $b"
  done
done 2>&1 | tee $OUT/one.txt
for r in 1 2; do
  for v in A B; do
    b=build-gpu; [ $v = B ] && b=/tmp/bB
    timeout 100 tests/bench/multigpu.sh --build $b --preset multigpu --samples MatrixMul --configs 4x --timeout 60 \
        --out /tmp/c$v$r > $OUT/compute$r$v.txt 2>&1
  done
done
for f in $OUT/compute*.txt; do echo "$(basename $f): $(grep -E '^Matrix' $f | tr -s ' ')"; done
