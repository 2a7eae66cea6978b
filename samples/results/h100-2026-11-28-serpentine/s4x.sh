#!/bin/bash
# GPU call: saxpy large at 4x (VAST_DEVICE_MEMORY=256000000) traced, in a few settings, and the
# expert's time beside it; traces and stats into one tarball.
source .device/setup.sh >/dev/null 2>&1
mkdir -p build-gpu/v /tmp/s4x && echo "$PWD/build-gpu/icd/libvast.so" > build-gpu/v/vast.icd
export CUDA_CACHE_PATH=/tmp/s4x/cuda
for i in 1 2; do timeout 60 build-gpu/samples/saxpy --platform "NVIDIA CUDA" -n 128M --iterations 10 --partitioned --chunk 16000000 | grep -E "^time"; done
run() { tag=$1; shift
  env OCL_ICD_FILENAMES="$PWD/build-gpu/icd/libvast.so" OCL_ICD_VENDORS="$PWD/build-gpu/v" VAST_BACKEND="NVIDIA CUDA" VAST_STATS=1 \
    VAST_DEVICE_MEMORY=256000000 VAST_CACHE_DIR=/tmp/s4x/vast VAST_TRACE=/tmp/s4x/$tag.trace.json "$@" \
    timeout 60 build-gpu/samples/saxpy --platform VAST -n 128M --iterations 10 > /tmp/s4x/$tag.out 2>&1
  echo "== $tag $*: $(grep -E '^time|^hash' /tmp/s4x/$tag.out | tr '\n' ' ')"; grep -E "stats: (kernel|pool)" /tmp/s4x/$tag.out | cut -c1-330; }
run warmup
run default
run page1m VAST_PAGE_SIZE=1M
run page4m VAST_PAGE_SIZE=4M
run noduplex VAST_DUPLEX_WINDOW=0
run fwd VAST_SERPENTINE=0
tar czf $OUT/s4x.tgz -C /tmp/s4x $(cd /tmp/s4x && ls *.trace.json *.out)
