#!/bin/bash
source .device/setup.sh
export VAST_CACHE_DIR=/tmp/vc
mkdir -p $OUT/v; echo $PWD/build-gpu/icd/libvast.so > $OUT/v/vast.icd
nv=$(cat /etc/OpenCL/vendors/nvidia.icd)
export OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so:$nv VAST_BACKEND=NVIDIA PARTITION_ICD_DIR=$OUT/v PARTITION_REAL_PLATFORM="NVIDIA CUDA"
.device/partition_chain > $OUT/chain_test.txt 2>&1; echo "chain test rc=$?" >> $OUT/chain_test.txt
.device/partition_chain --flip > $OUT/chain_flip.txt 2>&1; echo "flip rc=$?" >> $OUT/chain_flip.txt
tail -7 $OUT/chain_test.txt; tail -7 $OUT/chain_flip.txt
unset OCL_ICD_FILENAMES VAST_BACKEND PARTITION_ICD_DIR PARTITION_REAL_PLATFORM
GPU_REPORT_NO_OVERHEAD=1 tests/bench/gpu_report.sh build-gpu OUT --samples saxpy,MatrixMul,BlackScholes --configs native,vast-4x,expert --repeats 3 --warmup 1 --caches warm --deadline 300 --timeout 120 > OUT.log 2>&1
VAST_CHAIN=0 GPU_REPORT_NO_OVERHEAD=1 tests/bench/gpu_report.sh build-gpu OUT --samples saxpy,BlackScholes --configs vast-4x --repeats 3 --warmup 1 --caches warm --deadline 200 --timeout 120 > OUT.log 2>&1
mkdir -p $OUT/on $OUT/off; for d in on off; do cp /tmp/$d/results.md /tmp/$d/results.csv /tmp/$d/raw.csv /tmp/$d/commands.txt $OUT/$d/; grep -h "stats: kernel" /tmp/$d/logs/*vast-4x*r1.stderr > $OUT/$d/stats_r1.txt; done
grep -E "^[A-Za-z]+ +-" OUT.log OUT.log | tail -12
