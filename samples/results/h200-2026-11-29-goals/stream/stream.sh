#!/bin/bash
# Streaming above the budget (stand-in for data above the GPU's memory): saxpy over the
# application's arrays, VAST_DEVICE_MEMORY below the data; link bound from linkbw.
set -u
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/v; lib=$PWD/build-gpu/icd/libvast.so; echo $lib > /tmp/v/vast.icd
export VAST_CACHE_DIR=VCACHE
n=${1:-6442450945} its=${2:-5} budget=${3:-32G}
free -g | head -2
timeout 60 build/tests/bench/linkbw NVIDIA 1024 5 | tee $OUT/linkbw.md
for tr in "" 1; do
  e=(); [ -n "$tr" ] && e=(VAST_TRACE=$OUT/stream.trace.json)
  s=$SECONDS
  env OCL_ICD_FILENAMES=$lib OCL_ICD_VENDORS=/tmp/v VAST_BACKEND=NVIDIA VAST_STATS=1 VAST_LOG=info VAST_DEVICE_MEMORY=$budget "${e[@]}" \
    timeout -k 5 200 build-gpu/samples/saxpy --platform VAST -n $n --iterations $its --host-ptr 1 > $OUT/stream$tr.stdout 2> $OUT/stream$tr.stderr
  echo "rc=$? wall=$((SECONDS - s)) trace=$tr"
  grep -E "^(time|hash|bandwidth)" $OUT/stream$tr.stdout; grep -E "stats: (kernel|pool)" $OUT/stream$tr.stderr | cut -c1-500
done
