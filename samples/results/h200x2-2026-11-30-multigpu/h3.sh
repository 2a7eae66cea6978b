#!/bin/bash
# Issue 15: kernel-bound launches (vast_launch_stage_if_kernel_bound: estimated bytes through
# device memory per byte of the launch's buffers >= 128) stage what is not pinned of their
# stores and hold the background pinner while they run. N: the library as it lands on merged
# launches; D: the same with the measuring switch XNOSTAGE=1 (no launch kernel-bound: the
# behaviour before). Both switches (XNOSTAGE, XONE) were getenv calls of this build only. Merged over both GPUs at 4x (a member's budget data / 8), h2's eight
# samples alternating, 2 rounds after a warm-up, and which launches were found kernel-bound
# (VAST_LOG=info). One GPU at a member's budget, the compute preset's MatrixMul and NBody: D,
# and O (XONE=1: the same policy on one device's partitioned launches, a measuring switch).
# Then one GPU, MatrixMul -n 4096 --rows 8192 at 4x (80 MiB): the expert, D and O, 4 rounds.
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
  line="$s ($args) kernel-bound launches: $(env "${V[@]}" VAST_MERGE_DEVICES=1 "${m[@]}" VAST_LOG=info build-gpu/samples/$s --platform VAST $args 2>&1 | grep -c 'bytes through device memory per byte')"
  for r in 1 2; do
    line+=" | N: $(run) D: $(run XNOSTAGE=1)"
  done
  case $s in MatrixMul|NBody)
    one() { env "${V[@]}" CUDA_VISIBLE_DEVICES=0 "${m[@]}" "$@" build-gpu/samples/$s --platform VAST $args 2>/dev/null | t; }
    line+=" | one GPU D: $(one) O: $(one XONE=1) D: $(one) O: $(one XONE=1)" ;;
  esac
  echo "$line"
done <<'LIST' 2>&1 | tee $OUT/h3-merged.txt
MatrixMul -n 8192 --rows 65536 --check sample
NBody -n 1048576 --iterations 2 --check sample
saxpy -n 128M --iterations 10
BlackScholes -n 64M --iterations 4
vecadd -n 128M
Reduction -n 256M
SpMV --rows 4M --width 32 --cols 4M
FDTD3d -n 512 --iterations 4
LIST
export CUDA_VISIBLE_DEVICES=0
for r in w 1 2 3 4; do
  line="$r MatrixMul 4x expert: $(build-gpu/samples/MatrixMul --platform NVIDIA -n 4096 --rows 8192 --partitioned --chunk 256 | t)"
  for o in D O; do x=(); [ $o = O ] && x=(XONE=1); line+=" $o: $(env "${V[@]}" "${x[@]}" VAST_DEVICE_MEMORY=83886080 build-gpu/samples/MatrixMul --platform VAST -n 4096 --rows 8192 | t)"; done
  echo "$line"
done 2>&1 | tee $OUT/h3-one.txt
