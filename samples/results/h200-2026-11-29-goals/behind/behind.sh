#!/bin/bash
set -u
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/v; lib=$PWD/build-gpu/icd/libvast.so; echo $lib > /tmp/v/vast.icd
export VAST_CACHE_DIR=/tmp/vc
V=(OCL_ICD_FILENAMES=$lib OCL_ICD_VENDORS=/tmp/v VAST_BACKEND=NVIDIA)
for m in 0 3; do
  echo "== native mode $m"; ./behind NVIDIA 200000 $m | tail -3
  echo "== vast mode $m"; env "${V[@]}" ./behind VAST 200000 $m | tail -3
done
for r in 1 2 3 4; do
  echo "nbody native $(build-gpu/samples/NBody --platform NVIDIA -n 131072 | grep ^time)"
  echo "nbody vast $(env "${V[@]}" build-gpu/samples/NBody --platform VAST -n 131072 | grep ^time)"
done
