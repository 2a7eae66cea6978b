#!/bin/bash
# Where MatrixMul's launch at 4x waits (q1's traces: its start waits for the background pins of
# C, A and B): the landed library (build-gpu) with its defaults (D), with VAST_PIN=0 (P: no store
# pinned, every transfer staged through the pinned slots) and with VAST_PIN_BACKGROUND=0 (N:
# transfers pin what they touch), alternating after a warm-up. One GPU: MatrixMul -n 4096 --rows
# 8192 and saxpy -n 128M --iterations 10 at 4x, 4 rounds with the expert beside, a traced
# MatrixMul of D and P. Two GPUs: the compute preset's MatrixMul merged at 4x, D and P, 2 rounds.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
export OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a
pol() { case $1 in D) echo "VAST_PIN=1" ;; P) echo "VAST_PIN=0" ;; N) echo "VAST_PIN_BACKGROUND=0" ;; esac; }
declare -A ARGS=([MatrixMul]="-n 4096 --rows 8192" [saxpy]="-n 128M --iterations 10")
declare -A CHUNK=([MatrixMul]=256 [saxpy]=16000000)
declare -A MEM=([MatrixMul]=83886080 [saxpy]=256000000)
for s in MatrixMul saxpy; do
  for r in w 1 2 3 4; do
    line="$s 4x $r expert: $(build-gpu/samples/$s --platform NVIDIA ${ARGS[$s]} --partitioned --chunk ${CHUNK[$s]} | grep -E '^time' | cut -d' ' -f2)"
    for p in D P N; do
      line+=" $p: $(env $(pol $p) VAST_DEVICE_MEMORY=${MEM[$s]} build-gpu/samples/$s --platform VAST ${ARGS[$s]} | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
    done
    echo "$line"
  done
done 2>&1 | tee $OUT/one.txt
for p in D P; do
  env $(pol $p) VAST_TRACE=$OUT/q2-MatrixMul-$p.trace.json VAST_DEVICE_MEMORY=${MEM[MatrixMul]} build-gpu/samples/MatrixMul --platform VAST ${ARGS[MatrixMul]} | grep -E '^time' | sed "s/^/traced $p /"
done 2>&1 | tee -a $OUT/one.txt
args="-n 8192 --rows 65536 --check sample"
data=$(build-gpu/samples/MatrixMul --platform __multigpu_probe__ $args 2>/dev/null | sed -n 's/^data: \([0-9]*\) bytes$/\1/p' | head -1)
VAST_DEVICE_MEMORY=$((data/8)) VAST_MERGE_DEVICES=1 build-gpu/samples/MatrixMul --platform VAST $args > /dev/null 2>&1
for r in 1 2; do
  line="merged $r:"
  for p in D P; do
    line+=" $p: $(env $(pol $p) VAST_DEVICE_MEMORY=$((data/8)) VAST_MERGE_DEVICES=1 build-gpu/samples/MatrixMul --platform VAST $args | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
  done
  echo "$line"
done 2>&1 | tee $OUT/merged.txt
