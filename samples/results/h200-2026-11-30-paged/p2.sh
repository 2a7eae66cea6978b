#!/bin/bash
# The change as it lands (build-gpu: chunks given to paged kernels once they hold a frame, the
# fault log's host side made by the first run that faults) against the code before (base:
# .device/libvast-base.so, which also carries n3's diagnostic spans, idle unless traced), on
# two H200s: (1) forced paged NBody on one GPU, native beside, 4 rounds alternating after a
# warm-up; (2) the GPU memory a forced paged NBody holds (nvidia-smi, both GPUs); (3) issue 15's
# compute-bound sizes (preset multigpu) at 4x through tests/bench/multigpu.sh (native, one GPU,
# one GPU at a member's budget, merged over both), base and new in turn, 2 rounds.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a /tmp/b /tmp/bb/icd; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd; echo $PWD/.device/libvast-base.so > /tmp/b/vast.icd
cp .device/libvast-base.so /tmp/bb/icd/libvast.so; cp build-gpu/icd/vastinfo /tmp/bb/icd/; ln -sfn $PWD/build-gpu/samples /tmp/bb/samples
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
lib() { case $1 in new) echo "OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a" ;; base) echo "OCL_ICD_FILENAMES=$PWD/.device/libvast-base.so OCL_ICD_VENDORS=/tmp/b" ;; esac; }
t() { grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' '; }
echo "== (1) forced paged NBody -n 131072: time hash" | tee $OUT/p2.txt
for r in w 1 2 3 4; do
  line="$r native: $(build-gpu/samples/NBody --platform NVIDIA -n 131072 | t)"
  for l in base new; do line+=" $l: $(env $(lib $l) VAST_FORCE_PAGED=1 build-gpu/samples/NBody --platform VAST -n 131072 | t)"; done
  echo "$line"
done 2>&1 | tee -a $OUT/p2.txt
echo "== (2) GPU memory used (MiB, both GPUs) by forced paged NBody -n 131072 --iterations 30, one GPU and merged" | tee -a $OUT/p2.txt
for l in base new; do for m in 0 1; do
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 20 > /tmp/smi.txt & sp=$!
  sleep 0.5; env $(lib $l) VAST_MERGE_DEVICES=$m VAST_FORCE_PAGED=1 build-gpu/samples/NBody --platform VAST -n 131072 --iterations 30 > /tmp/o.txt; sleep 0.3
  kill $sp; wait $sp 2>/dev/null
  echo "$l merged=$m: peak $(paste -d' ' - - < /tmp/smi.txt | awk '{s=$1+$2; if (s>m) {m=s; a=$1; b=$2}} END {print m " (" a " + " b ")"}') $(grep -E '^time|^hash' /tmp/o.txt | tr '\n' ' ')"
done; done 2>&1 | tee -a $OUT/p2.txt
echo "== (3) multigpu preset at 4x" | tee -a $OUT/p2.txt
for r in 1 2; do for l in new base; do
  b=build-gpu; [ $l = base ] && b=/tmp/bb
  echo "-- round $r $l"
  tests/bench/multigpu.sh --build $b --preset multigpu --configs 4x --timeout 200 2>&1 | grep -vE '^multigpu:'
done; done 2>&1 | tee -a $OUT/p2.txt
