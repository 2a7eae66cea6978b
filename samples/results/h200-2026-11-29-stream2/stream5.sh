#!/bin/bash
# One pass over the application's 2 x 12 GiB (saxpy --iterations 1 --host-ptr 1) at a 16 GiB
# budget: VAST as it is (traced: when does the launch start?), an experimental library whose
# background pinner waits as long as each pin took before the next (.device/libvast-gap.so,
# not committed), and VAST_PIN=0; two rounds.
set -u
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/v /tmp/g; lib=$PWD/build-gpu/icd/libvast.so; echo $lib > /tmp/v/vast.icd
gap=$PWD/.device/libvast-gap.so; echo $gap > /tmp/g/vast.icd
export VAST_CACHE_DIR=/tmp/vc
n=3221225473
for r in 1 2; do
for c in default gap pin0; do
  l=$lib v=/tmp/v e=(); case $c in pin0) e=(VAST_PIN=0) ;; gap) l=$gap v=/tmp/g ;; esac
  [ $c = default ] && e=(VAST_TRACE=$OUT/default-r$r.trace.json)
  env OCL_ICD_FILENAMES=$l OCL_ICD_VENDORS=$v VAST_BACKEND=NVIDIA VAST_STATS=1 VAST_DEVICE_MEMORY=16G "${e[@]}" \
    timeout -k 5 100 build-gpu/samples/saxpy --platform VAST -n $n --iterations 1 --host-ptr 1 > /tmp/s.out 2> /tmp/s.err
  echo "== $c r$r: rc=$? $(grep -E '^(time|hash)' /tmp/s.out | tr '\n' ' ') $(grep -E 'stats: kernel' /tmp/s.err | grep -oE 'transfer_s=[0-9.]+|total_s=[0-9.]+|plan_s=[0-9.]+|build_s=[0-9.]+' | tr '\n' ' ')"
done
done 2>&1 | tee $OUT/stream5.txt
