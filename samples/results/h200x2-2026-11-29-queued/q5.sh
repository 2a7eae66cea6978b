#!/bin/bash
# Stores pinned at creation again, each granule of VAST's own memory first faulted in by the
# pinner (madvise MADV_POPULATE_WRITE, which takes the address space's lock for reading only,
# as the application's own faults do): E (build-gpu, q5-experiment.patch) against L (the
# landed policy: pinned at first use; .device/libvast-base.so), alternating after a warm-up,
# 4 rounds. One GPU: MatrixMul -n 4096 --rows 8192, saxpy -n 128M --iterations 10,
# BlackScholes -n 64M --iterations 4 and vecadd -n 128M at 4x (budget data / 4), saxpy direct,
# with the expert or native beside; a traced MatrixMul of each.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a /tmp/b; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd; echo $PWD/.device/libvast-base.so > /tmp/b/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
pol() { case $1 in E) echo "OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a" ;;
                   L) echo "OCL_ICD_FILENAMES=$PWD/.device/libvast-base.so OCL_ICD_VENDORS=/tmp/b" ;; esac; }
while read -r s cfg ref args; do
  data=$(build-gpu/samples/$s --platform __multigpu_probe__ $args 2>/dev/null | sed -n 's/^data: \([0-9]*\) bytes$/\1/p' | head -1)
  m=(); [ $cfg = 4x ] && m=(VAST_DEVICE_MEMORY=$((data/4)))
  for r in w 1 2 3 4; do
    case $ref in expert:*) e=$(build-gpu/samples/$s --platform NVIDIA $args --partitioned --chunk ${ref#expert:} | grep -E '^time' | cut -d' ' -f2) ;;
                 native) e=$(build-gpu/samples/$s --platform NVIDIA $args | grep -E '^time' | cut -d' ' -f2) ;; esac
    line="$s $cfg $r ${ref%%:*}: $e"
    for p in E L; do
      line+=" $p: $(env $(pol $p) "${m[@]}" build-gpu/samples/$s --platform VAST $args | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
    done
    echo "$line"
  done
done <<'LIST' 2>&1 | tee $OUT/one.txt
MatrixMul 4x expert:256 -n 4096 --rows 8192
saxpy 4x expert:16000000 -n 128M --iterations 10
BlackScholes 4x native -n 64M --iterations 4
vecadd 4x native -n 128M
saxpy direct native -n 128M --iterations 10
LIST
data=$(build-gpu/samples/MatrixMul --platform __multigpu_probe__ -n 4096 --rows 8192 2>/dev/null | sed -n 's/^data: \([0-9]*\) bytes$/\1/p' | head -1)
for p in E L; do
  env $(pol $p) VAST_TRACE=$OUT/q5-MatrixMul-$p.trace.json VAST_DEVICE_MEMORY=$((data/4)) build-gpu/samples/MatrixMul --platform VAST -n 4096 --rows 8192 | grep -E '^time' | sed "s/^/traced $p /"
done 2>&1 | tee -a $OUT/one.txt
