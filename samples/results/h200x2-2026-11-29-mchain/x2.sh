#!/bin/bash
# One call on nvidia-h200-x2: the chain test on the merged device over both GPUs (NVIDIA's
# OpenCL as the reference), then saxpy and BlackScholes at 4x (large preset) natively, on one
# GPU and merged, three rounds with chains and one without (VAST_CHAIN=0), and one round of the
# compute-bound preset at 4x. Run from the project root with .device and build-gpu carried.
source .device/setup.sh
nvidia-smi -L
export VAST_CACHE_DIR=/tmp/vc
mkdir -p $OUT/v; echo $PWD/build-gpu/icd/libvast.so > $OUT/v/vast.icd
nv=$(cat /etc/OpenCL/vendors/nvidia.icd)
(export OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so:$nv VAST_BACKEND=NVIDIA PARTITION_ICD_DIR=$OUT/v \
     PARTITION_REAL_PLATFORM="NVIDIA CUDA" VAST_MERGE_DEVICES=1
 timeout 120 .device/partition_chain > $OUT/chain_merged.txt 2>&1; echo "rc=$?" >> $OUT/chain_merged.txt
 timeout 60 .device/partition_chain --only chain --flip > $OUT/chain_merged_flip.txt 2>&1; echo "rc=$?" >> $OUT/chain_merged_flip.txt)
tail -7 $OUT/chain_merged.txt; tail -3 $OUT/chain_merged_flip.txt
for r in 1 2 3; do
  timeout 150 tests/bench/multigpu.sh --build build-gpu --preset large --samples saxpy,BlackScholes --configs 4x \
      --timeout 60 --out /tmp/m$r > $OUT/round$r.txt 2>&1
done
VAST_CHAIN=0 timeout 150 tests/bench/multigpu.sh --build build-gpu --preset large --samples saxpy,BlackScholes \
    --configs 4x --timeout 60 --out /tmp/m0 > $OUT/nochain.txt 2>&1
timeout 200 tests/bench/multigpu.sh --build build-gpu --preset multigpu --configs 4x --timeout 60 --out /tmp/mc \
    > $OUT/compute.txt 2>&1
grep -h "chained=\|merged_member" /tmp/m1/saxpy.4x.merged.stderr 2>/dev/null | cut -c1-200 > $OUT/saxpy_merged_stats.txt
tail -n 4 $OUT/round*.txt $OUT/nochain.txt $OUT/compute.txt
