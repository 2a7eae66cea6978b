#!/bin/bash
# Non-blocking writes run on the application's thread when the queue is idle (the library as
# it is) against an experimental library in which every non-blocking host-side command goes to
# the host lane (.device/libvast-exp.so with EXP_NO_INLINE=1: the plan at enqueue then overlaps
# the writes), alternating, 4 rounds after a warm-up; the expert each round; saxpy also traced
# once with each. MatrixMul -n 4096 --rows 8192 and saxpy -n 128M --iterations 10 at 4x.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/v /tmp/x; echo $PWD/build-gpu/icd/libvast.so > /tmp/v/vast.icd; echo $PWD/.device/libvast-exp.so > /tmp/x/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc
declare -A ARGS=([MatrixMul]="-n 4096 --rows 8192" [saxpy]="-n 128M --iterations 10")
declare -A CHUNK=([MatrixMul]=256 [saxpy]=16000000)
declare -A MEM=([MatrixMul]=83886080 [saxpy]=256000000)
for s in MatrixMul saxpy; do
  for r in w 1 2 3 4; do
    e=$(build-gpu/samples/$s --platform NVIDIA ${ARGS[$s]} --partitioned --chunk ${CHUNK[$s]} | grep -E "^time" | tr '\n' ' ')
    a=$(env OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/v VAST_BACKEND=NVIDIA VAST_DEVICE_MEMORY=${MEM[$s]} build-gpu/samples/$s --platform VAST ${ARGS[$s]} | grep -E "^time|^hash" | tr '\n' ' ')
    b=$(env OCL_ICD_FILENAMES=$PWD/.device/libvast-exp.so OCL_ICD_VENDORS=/tmp/x VAST_BACKEND=NVIDIA EXP_NO_INLINE=1 VAST_DEVICE_MEMORY=${MEM[$s]} build-gpu/samples/$s --platform VAST ${ARGS[$s]} | grep -E "^time|^hash" | tr '\n' ' ')
    echo "$s $r expert: $e | inline: $a | exp: $b"
  done
done 2>&1 | tee $OUT/inline.txt
for v in inline exp; do
  l=$PWD/build-gpu/icd/libvast.so d=/tmp/v e=(); [ $v = exp ] && { l=$PWD/.device/libvast-exp.so; d=/tmp/x; e=(EXP_NO_INLINE=1); }
  env OCL_ICD_FILENAMES=$l OCL_ICD_VENDORS=$d VAST_BACKEND=NVIDIA "${e[@]}" VAST_DEVICE_MEMORY=256000000 VAST_STATS=1 \
    VAST_TRACE=$OUT/saxpy-$v.trace.json build-gpu/samples/saxpy --platform VAST -n 128M --iterations 10 > /tmp/o 2> /tmp/e
  echo "saxpy traced $v: $(grep -E '^time' /tmp/o) $(grep -oE 'chained=[0-9]+|partitions=[0-9]+|total_s=[0-9.]+' /tmp/e | tr '\n' ' ')"
done | tee -a $OUT/inline.txt
