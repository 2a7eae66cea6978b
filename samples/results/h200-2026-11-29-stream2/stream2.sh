#!/bin/bash
# Streaming above the budget with this stop's library (as ../h200-2026-11-29-goals/stream/stream.sh):
# saxpy over the application's arrays (--host-ptr 1), 2 x 24 GiB, VAST_DEVICE_MEMORY=32G, and
#   chain     5 iterations (identical launches: they chain, interpose/chain.c)
#   nochain   5 iterations, VAST_CHAIN=0 (each launch streams the data again: the 0.73 figure)
#   once      1 iteration (one pass over memory the driver has not pinned)
set -u
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/v; lib=$PWD/build-gpu/icd/libvast.so; echo $lib > /tmp/v/vast.icd
export VAST_CACHE_DIR=/tmp/vc
n=6442450945
free -g | head -2
timeout 60 .device/linkbw NVIDIA 1024 5 | tee $OUT/linkbw.md
for c in chain nochain once chain nochain; do
  its=5 e=(); [ $c = nochain ] && e=(VAST_CHAIN=0); [ $c = once ] && its=1
  s=$SECONDS
  env OCL_ICD_FILENAMES=$lib OCL_ICD_VENDORS=/tmp/v VAST_BACKEND=NVIDIA VAST_STATS=1 VAST_DEVICE_MEMORY=32G "${e[@]}" \
    timeout -k 5 150 build-gpu/samples/saxpy --platform VAST -n $n --iterations $its --host-ptr 1 > /tmp/s.out 2> /tmp/s.err
  echo "== $c: rc=$? wall=$((SECONDS - s))"
  grep -E "^(time|hash|bandwidth|PASS)" /tmp/s.out | tr '\n' ' '; echo
  grep -E "stats: (kernel|pool)" /tmp/s.err | grep -oE "(kernel|pool)=\"?[A-Za-z0-9 ]+\"?|launches=[0-9]+|partitions=[0-9]+|h2d_bytes=[0-9]+|d2h_bytes=[0-9]+|total_s=[0-9.]+|chained=[0-9]+|backwards=[0-9]+" | tr '\n' ' '; echo
done 2>&1 | tee $OUT/stream2.txt
