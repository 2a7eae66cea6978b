#!/bin/bash
# MatrixMul (multigpu preset) at 4x: where the merged device's time goes (traces), against one GPU
source .device/setup.sh
export VAST_CACHE_DIR=/tmp/vc VAST_BACKEND="NVIDIA CUDA" VAST_STATS=1
b=$PWD/build-gpu
mkdir -p /tmp/v && echo $b/icd/libvast.so > /tmp/v/vast.icd
export OCL_ICD_VENDORS=/tmp/v OCL_ICD_FILENAMES=$b/icd/libvast.so
args="-n 8192 --rows 65536 --check sample"
data=$(env -u OCL_ICD_FILENAMES $b/samples/MatrixMul --platform __multigpu_probe__ $args 2>/dev/null | sed -n 's/^data: \([0-9]*\) bytes$/\1/p' | head -1)
echo "data=$data"
m=$((data/8)); o=$((data/4))
# warm compile caches
VAST_DEVICE_MEMORY=$m VAST_MERGE_DEVICES=1 $b/samples/MatrixMul --platform VAST $args > /dev/null 2>&1
for r in 1 2; do
  VAST_DEVICE_MEMORY=$m VAST_MERGE_DEVICES=1 VAST_TRACE=$OUT/merged$r.json $b/samples/MatrixMul --platform VAST $args > /tmp/mo$r 2>/tmp/me$r
  echo "merged r$r $(grep -E '^time|^hash' /tmp/mo$r | tr '\n' ' ')"
  VAST_DEVICE_MEMORY=$o VAST_TRACE=$OUT/one$r.json $b/samples/MatrixMul --platform VAST $args > /tmp/oo$r 2>/tmp/oe$r
  echo "one r$r $(grep -E '^time|^hash' /tmp/oo$r | tr '\n' ' ')"
  VAST_DEVICE_MEMORY=$m VAST_MERGE_DEVICES=1 VAST_PIN_BACKGROUND=0 $b/samples/MatrixMul --platform VAST $args > /tmp/no$r 2>/tmp/ne$r
  echo "merged nobgpin r$r $(grep -E '^time|^hash' /tmp/no$r | tr '\n' ' ')"
  env -u OCL_ICD_FILENAMES -u OCL_ICD_VENDORS $b/samples/MatrixMul --platform "NVIDIA CUDA" $args > /tmp/nn$r 2>&1
  echo "native r$r $(grep -E '^time|^hash' /tmp/nn$r | tr '\n' ' ')"
done
cp /tmp/me2 $OUT/merged2.stderr; cp /tmp/oe2 $OUT/one2.stderr
ls -la $OUT
