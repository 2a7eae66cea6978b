#!/bin/bash
# Issue 15: the background pinner during merged launches (an experiment's switch, XHOLD, in the
# library measured, h2-hold.patch on 9ab141a with h1's changes; not landed): D (XHOLD=0, the defaults), H (1: a merged launch holds the
# pinner from its start to its end, as s6 of ../h200-2026-11-29-staging/), A (2: H, and the
# stores still queued when it begins leave the queue for good, their unpinned granules staged by
# every transfer), P (VAST_PIN=0). Merged over both GPUs at 4x (a member's budget data / 8),
# s6's eight samples, alternating, 2 rounds after a warm-up; MatrixMul and NBody of the compute
# preset also on one GPU at a member's budget (tests/bench/multigpu.sh's baseline).
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
V=(OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a)
t() { grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' '; }
while read -r s args; do
  case "$s" in ''|\#*) continue ;; esac
  data=$(build-gpu/samples/$s --platform __multigpu_probe__ $args 2>/dev/null | sed -n 's/^data: \([0-9]*\) bytes$/\1/p' | head -1)
  m=(VAST_DEVICE_MEMORY=$((data/8)))
  run() { env "${V[@]}" VAST_MERGE_DEVICES=1 "${m[@]}" "$@" build-gpu/samples/$s --platform VAST $args 2>/dev/null | t; }
  line="$s ($args)"
  run > /dev/null
  for r in 1 2; do
    line+=" | D: $(run XHOLD=0) H: $(run XHOLD=1) A: $(run XHOLD=2) P: $(run VAST_PIN=0)"
  done
  case $s in MatrixMul|NBody) line+=" | one GPU D: $(env "${V[@]}" CUDA_VISIBLE_DEVICES=0 "${m[@]}" build-gpu/samples/$s --platform VAST $args 2>/dev/null | t)" ;; esac
  echo "$line"
done <<'LIST' 2>&1 | tee $OUT/h2-merged.txt
MatrixMul -n 8192 --rows 65536 --check sample
NBody -n 1048576 --iterations 2 --check sample
saxpy -n 128M --iterations 10
BlackScholes -n 64M --iterations 4
vecadd -n 128M
Reduction -n 256M
SpMV --rows 4M --width 32 --cols 4M
FDTD3d -n 512 --iterations 4
LIST
