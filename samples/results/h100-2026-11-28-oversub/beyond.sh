#!/bin/bash
# GPU call: item 3 of the two-GPU issue: saxpy above both GPUs' memory through the merged device.
source .device/setup.sh >/dev/null 2>&1
mode=${1:-merged} n=${2:-24159191041} its=${3:-5} tmo=${4:-520}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; free -g | head -2; nproc
[ "$mode" = merged ] && timeout 60 build-gpu/tests/bench/linkbw NVIDIA 1024 5 | tee $OUT/linkbw.md
mkdir -p build-gpu/v && echo "$PWD/build-gpu/icd/libvast.so" > build-gpu/v/vast.icd
export VAST_BACKEND="NVIDIA CUDA"
extra=(); [ "$mode" = merged ] && extra=(VAST_MERGE_DEVICES=1)
start=$SECONDS
( while sleep 20; do echo "$(date +%T) $(free -g | awk '/Mem:/ {print "used " $3 " GiB"}')"; done ) > $OUT/beyond.$mode.mem &
mon=$!
env OCL_ICD_FILENAMES="$PWD/build-gpu/icd/libvast.so" OCL_ICD_VENDORS="$PWD/build-gpu/v" VAST_STATS=1 VAST_LOG=info VAST_TRACE=$OUT/beyond.$mode.trace.json "${extra[@]}" \
  timeout -k 5 "$tmo" build-gpu/samples/saxpy --platform VAST -n "$n" --iterations "$its" --host-ptr 1 \
  > $OUT/beyond.$mode.stdout 2> $OUT/beyond.$mode.stderr
echo "rc=$? wall=$((SECONDS - start)) s"
kill $mon
cat $OUT/beyond.$mode.stdout; grep -E "stats: (kernel|pool|merged)" $OUT/beyond.$mode.stderr | cut -c1-400
