#!/bin/bash
# The one-pass case traced (VAST_TRACE), and native runs of the same commands (2 x 24 GiB fits the
# H200: NVIDIA's OpenCL over the application's arrays) for the baseline.
set -u
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/v; lib=$PWD/build-gpu/icd/libvast.so; echo $lib > /tmp/v/vast.icd
export VAST_CACHE_DIR=/tmp/vc
n=6442450945
for c in native1 native5 once-traced chain-traced; do
  its=5; case $c in *1|once*) its=1 ;; esac
  s=$SECONDS
  if [ "${c#native}" != "$c" ]; then
    timeout -k 5 150 build-gpu/samples/saxpy --platform NVIDIA -n $n --iterations $its --host-ptr 1 > /tmp/s.out 2> /tmp/s.err
  else
    env OCL_ICD_FILENAMES=$lib OCL_ICD_VENDORS=/tmp/v VAST_BACKEND=NVIDIA VAST_STATS=1 VAST_DEVICE_MEMORY=32G \
      VAST_TRACE=$OUT/$c.trace.json \
      timeout -k 5 150 build-gpu/samples/saxpy --platform VAST -n $n --iterations $its --host-ptr 1 > /tmp/s.out 2> /tmp/s.err
  fi
  echo "== $c: rc=$? wall=$((SECONDS - s))"
  grep -E "^(time|hash|bandwidth|PASS)" /tmp/s.out | tr '\n' ' '; echo
  grep -E "stats: (kernel|pool)" /tmp/s.err | grep -oE "(kernel|pool)=\"?[A-Za-z0-9 ]+\"?|launches=[0-9]+|partitions=[0-9]+|h2d_bytes=[0-9]+|d2h_bytes=[0-9]+|total_s=[0-9.]+|chained=[0-9]+|transfer_s=[0-9.]+|kernel_s=[0-9.]+" | tr '\n' ' '; echo
done 2>&1 | tee $OUT/stream3.txt
ls -la $OUT
