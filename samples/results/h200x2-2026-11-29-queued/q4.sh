#!/bin/bash
# The merged device over two H200s at 4x (a member's budget data / 8) with stores pinned (D,
# the defaults) against staged (P, VAST_PIN=0: q2 found the compute preset's MatrixMul 5%
# faster so), for the compute preset's two samples and six of the large preset's, alternating
# after a warm-up, 2 rounds; native once for the hash; one GPU at a member's budget (D) once
# for the compute samples' speed-ups. Writes $OUT/merged.txt.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
V=(OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a)
while read -r s args; do
  case "$s" in ''|\#*) continue ;; esac
  data=$(build-gpu/samples/$s --platform __multigpu_probe__ $args 2>/dev/null | sed -n 's/^data: \([0-9]*\) bytes$/\1/p' | head -1)
  m=(VAST_DEVICE_MEMORY=$((data/8)))
  run() { env "$@" build-gpu/samples/$s --platform VAST $args 2>/dev/null | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' '; }
  line="$s ($args) native: $(build-gpu/samples/$s --platform NVIDIA $args | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
  run "${V[@]}" "${m[@]}" VAST_MERGE_DEVICES=1 > /dev/null
  for r in 1 2; do
    line+=" | D: $(run "${V[@]}" "${m[@]}" VAST_MERGE_DEVICES=1) P: $(run "${V[@]}" "${m[@]}" VAST_MERGE_DEVICES=1 VAST_PIN=0)"
  done
  case "$s$args" in *--check*) line+=" | one GPU D: $(run "${V[@]}" "${m[@]}") P: $(run "${V[@]}" "${m[@]}" VAST_PIN=0)" ;; esac
  echo "$line"
done <<'LIST' 2>&1 | tee $OUT/merged.txt
MatrixMul -n 8192 --rows 65536 --check sample
NBody -n 1048576 --iterations 2 --check sample
saxpy -n 128M --iterations 10
BlackScholes -n 64M --iterations 4
vecadd -n 128M
Reduction -n 256M
SpMV --rows 4M --width 32 --cols 4M
FDTD3d -n 512 --iterations 4
LIST
