#!/bin/bash
# The code as it lands (8c17e0a), every sample of the large preset at 4x natively, through VAST
# on one GPU and merged over both: every hash against native's.
source .device/setup.sh >/dev/null 2>&1
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc
timeout 200 tests/bench/multigpu.sh --build build-gpu --preset large --configs 4x --timeout 30 --out /tmp/f \
    > $OUT/final.txt 2>&1
echo "rc=$?" >> $OUT/final.txt
cat $OUT/final.txt
