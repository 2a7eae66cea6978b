#!/bin/bash
source .device/setup.sh
mkdir -p /tmp/v; echo $PWD/build-gpu/icd/libvast.so > /tmp/v/vast.icd
for s in "saxpy -n 128M --iterations 10" "BlackScholes -n 64M --iterations 4"; do
  set -- $s; name=$1; shift
  n=$(build-gpu/samples/$name --platform NVIDIA "$@" | grep -E "hash|time" | tr '\n' ' ')
  m=$(env OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/v VAST_BACKEND=NVIDIA VAST_MERGE_DEVICES=1 VAST_DEVICE_MEMORY=256000000 VAST_STATS=1 VAST_CACHE_DIR=/tmp/vc build-gpu/samples/$name --platform VAST "$@" 2>&1 | grep -E "^hash|^time|chained=|merged_member" | cut -c1-160 | tr '\n' ' ')
  o=$(env OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/v VAST_BACKEND=NVIDIA VAST_DEVICE_MEMORY=256000000 VAST_CACHE_DIR=/tmp/vc build-gpu/samples/$name --platform VAST "$@" 2>&1 | grep -E "^hash|^time" | tr '\n' ' ')
  echo "$name native: $n"; echo "$name merged 2x H200: $m"; echo "$name one H200: $o"
done
