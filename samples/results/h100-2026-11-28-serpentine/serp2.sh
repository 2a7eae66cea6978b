#!/bin/bash
# GPU call: pin cost per thread count, then saxpy and MatrixMul (large preset) native, paged,
# 4x and expert, with the serpentine order on and off (VAST_SERPENTINE), in one session.
source .device/setup.sh >/dev/null 2>&1
timeout 120 build-gpu/tests/bench/pinbench NVIDIA 16 256 1,2,4,8 | tee $OUT/pinbench.md
for s in 1 0; do
  VAST_SERPENTINE=$s timeout 230 samples/bench/run.sh --build build-gpu --out $OUT/serp$s --platform "NVIDIA CUDA" \
    --preset large --samples saxpy,MatrixMul --configs native,vast-paged,vast-4x,expert --repeats 3 --warmup 1 \
    --caches warm --timeout 60 --deadline 200 > $OUT/serp$s.log 2>&1
  echo "== VAST_SERPENTINE=$s rc=$?"; tail -25 $OUT/serp$s/results.md 2>/dev/null || tail -20 $OUT/serp$s.log
  rm -rf $OUT/serp$s/logs
done
