#!/bin/bash
# One H200: MatrixMul -n 4096 --rows 8192 at 4x (80 MiB) traced with the enqueue's capture and
# admission spans (what the application's thread does between its writes and the launch),
# three runs after a warm-up, the expert beside. Writes $OUT/NAME.txt (NAME: $1, default h1).
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
for r in w 1 2 3; do
  t=(); [ $r != w ] && t=(VAST_TRACE=$OUT/MatrixMul-$r.trace.json)
  e=$(build-gpu/samples/MatrixMul --platform NVIDIA -n 4096 --rows 8192 --partitioned --chunk 256 | grep -E '^time' | cut -d' ' -f2)
  a=$(env OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a "${t[@]}" VAST_DEVICE_MEMORY=83886080 \
      build-gpu/samples/MatrixMul --platform VAST -n 4096 --rows 8192 | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')
  echo "MatrixMul $r expert: $e VAST: $a"
done 2>&1 | tee "$OUT/${1:-h1}.txt"
