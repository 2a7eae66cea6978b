#!/bin/bash
# One pass over the application's memory (saxpy --iterations 1 --host-ptr 1, 2 x 12 GiB,
# VAST_DEVICE_MEMORY=16G): native, VAST as it is, and VAST's pinning policies (VAST_PIN=0: every
# transfer stages through pinned slots; VAST_PIN_BACKGROUND=0: transfers pin what they touch;
# 32 MiB staging slots), alternating twice.
set -u
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/v; lib=$PWD/build-gpu/icd/libvast.so; echo $lib > /tmp/v/vast.icd
export VAST_CACHE_DIR=/tmp/vc
n=3221225473
for r in 1 2; do
for c in native default pin0 slot32M pinbg0; do
  e=(); case $c in pin0) e=(VAST_PIN=0) ;; slot32M) e=(VAST_STAGING_SLOT=32M) ;; pinbg0) e=(VAST_PIN_BACKGROUND=0) ;; esac
  if [ $c = native ]; then
    timeout -k 5 100 build-gpu/samples/saxpy --platform NVIDIA -n $n --iterations 1 --host-ptr 1 > /tmp/s.out 2> /tmp/s.err
  else
    env OCL_ICD_FILENAMES=$lib OCL_ICD_VENDORS=/tmp/v VAST_BACKEND=NVIDIA VAST_STATS=1 VAST_DEVICE_MEMORY=16G "${e[@]}" \
      timeout -k 5 100 build-gpu/samples/saxpy --platform VAST -n $n --iterations 1 --host-ptr 1 > /tmp/s.out 2> /tmp/s.err
  fi
  echo "== $c r$r: rc=$? $(grep -E '^(time|hash)' /tmp/s.out | tr '\n' ' ') $(grep -E 'stats: kernel' /tmp/s.err | grep -oE 'transfer_s=[0-9.]+|kernel_s=[0-9.]+|total_s=[0-9.]+' | tr '\n' ' ')"
done
done 2>&1 | tee $OUT/stream4.txt
