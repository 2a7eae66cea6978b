#!/bin/bash
# A merged launch holds the background pinner from its start to its end (H; s6-merge-hold.patch):
# on a merged device the driver holds every member's calls while it pins, and what is not
# pinned when the launch begins is staged. Against D (the same library with XNO_MERGE_HOLD=1:
# 7494671's behaviour) and P (VAST_PIN=0), merged over both GPUs at 4x (a member's budget data /
# 8): s3's eight samples, alternating, 2 rounds after a warm-up; one traced merged MatrixMul of H.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
V=(OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a VAST_MERGE_DEVICES=1)
while read -r s args; do
  case "$s" in ''|\#*) continue ;; esac
  data=$(build-gpu/samples/$s --platform __multigpu_probe__ $args 2>/dev/null | sed -n 's/^data: \([0-9]*\) bytes$/\1/p' | head -1)
  m=(VAST_DEVICE_MEMORY=$((data/8)))
  run() { env "${V[@]}" "${m[@]}" "$@" build-gpu/samples/$s --platform VAST $args 2>/dev/null | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' '; }
  line="$s ($args)"
  run > /dev/null
  for r in 1 2; do
    line+=" | H: $(run) D: $(run XNO_MERGE_HOLD=1) P: $(run VAST_PIN=0)"
  done
  echo "$line"
done <<'LIST' 2>&1 | tee $OUT/s6-merged.txt
MatrixMul -n 8192 --rows 65536 --check sample
NBody -n 1048576 --iterations 2 --check sample
saxpy -n 128M --iterations 10
BlackScholes -n 64M --iterations 4
vecadd -n 128M
Reduction -n 256M
SpMV --rows 4M --width 32 --cols 4M
FDTD3d -n 512 --iterations 4
LIST
args="-n 8192 --rows 65536 --check sample"
data=$(build-gpu/samples/MatrixMul --platform __multigpu_probe__ $args 2>/dev/null | sed -n 's/^data: \([0-9]*\) bytes$/\1/p' | head -1)
env "${V[@]}" VAST_DEVICE_MEMORY=$((data/8)) VAST_TRACE=$OUT/s6-merged-H.trace.json build-gpu/samples/MatrixMul --platform VAST $args | grep -E '^time' | sed 's/^/traced H /' | tee -a $OUT/s6-merged.txt
