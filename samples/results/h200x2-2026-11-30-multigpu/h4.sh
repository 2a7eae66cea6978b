#!/bin/bash
# The library as it lands (build-gpu: kernel-bound partitioned launches stage their stores and
# hold the background pinner; the device's scratch frame made once; VAST_BUILD_WAIT) against
# the code before (base: 9ab141a, .device/libvast-base.so): issue 15's compute-bound sizes
# (preset multigpu) at 4x through tests/bench/multigpu.sh (native, one GPU, one GPU at a
# member's budget, merged over both), new and base in turn, 3 rounds of new and 2 of base.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/bb/icd; cp .device/libvast-base.so /tmp/bb/icd/libvast.so; cp build-gpu/icd/vastinfo /tmp/bb/icd/; ln -sfn $PWD/build-gpu/samples /tmp/bb/samples
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
for r in 1 2 3; do for l in new base; do
  [ $r = 3 ] && [ $l = base ] && continue
  b=build-gpu; [ $l = base ] && b=/tmp/bb
  echo "-- round $r $l"
  tests/bench/multigpu.sh --build $b --preset multigpu --configs 4x --timeout 200 2>&1 | grep -vE '^multigpu:'
done; done 2>&1 | tee $OUT/h4.txt
