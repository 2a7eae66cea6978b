#!/bin/bash
# The pin granule (VAST_PIN_GRANULE, new): the driver holds a launch's calls while the
# background pinner pins a granule (q1's traces: MatrixMul's launch starts after the pins of C,
# A and B, 128 and 64 MiB each, one call each at the default 256 MiB). build-gpu with granules
# of 256M (G256, the default), 32M (G32) and 8M (G8), alternating after a warm-up. One GPU:
# MatrixMul -n 4096 --rows 8192 and saxpy -n 128M --iterations 10 at 4x, 4 rounds, the expert
# beside; a traced MatrixMul at 32M. Two GPUs: the compute preset's MatrixMul merged at 4x,
# 2 rounds, and one GPU at the same member budget once per granule.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
V=(OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a)
declare -A ARGS=([MatrixMul]="-n 4096 --rows 8192" [saxpy]="-n 128M --iterations 10")
declare -A CHUNK=([MatrixMul]=256 [saxpy]=16000000)
declare -A MEM=([MatrixMul]=83886080 [saxpy]=256000000)
for s in MatrixMul saxpy; do
  for r in w 1 2 3 4; do
    line="$s 4x $r expert: $(build-gpu/samples/$s --platform NVIDIA ${ARGS[$s]} --partitioned --chunk ${CHUNK[$s]} | grep -E '^time' | cut -d' ' -f2)"
    for g in 256M 32M 8M; do
      line+=" G$g: $(env "${V[@]}" VAST_PIN_GRANULE=$g VAST_DEVICE_MEMORY=${MEM[$s]} build-gpu/samples/$s --platform VAST ${ARGS[$s]} | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
    done
    echo "$line"
  done
done 2>&1 | tee $OUT/one.txt
env "${V[@]}" VAST_PIN_GRANULE=32M VAST_TRACE=$OUT/q3-MatrixMul-G32M.trace.json VAST_DEVICE_MEMORY=${MEM[MatrixMul]} build-gpu/samples/MatrixMul --platform VAST ${ARGS[MatrixMul]} | grep -E '^time' | sed "s/^/traced G32M /" | tee -a $OUT/one.txt
args="-n 8192 --rows 65536 --check sample"
data=$(build-gpu/samples/MatrixMul --platform __multigpu_probe__ $args 2>/dev/null | sed -n 's/^data: \([0-9]*\) bytes$/\1/p' | head -1)
env "${V[@]}" VAST_DEVICE_MEMORY=$((data/8)) VAST_MERGE_DEVICES=1 build-gpu/samples/MatrixMul --platform VAST $args > /dev/null 2>&1
for r in 1 2; do
  line="merged $r:"
  for g in 256M 32M 8M; do
    line+=" G$g: $(env "${V[@]}" VAST_PIN_GRANULE=$g VAST_DEVICE_MEMORY=$((data/8)) VAST_MERGE_DEVICES=1 build-gpu/samples/MatrixMul --platform VAST $args | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
  done
  echo "$line"
done 2>&1 | tee $OUT/merged.txt
line="one GPU at a member's budget:"
for g in 256M 32M 8M; do
  line+=" G$g: $(env "${V[@]}" VAST_PIN_GRANULE=$g VAST_DEVICE_MEMORY=$((data/8)) build-gpu/samples/MatrixMul --platform VAST $args | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
done
echo "$line" | tee -a $OUT/merged.txt
