#!/bin/bash
# Large non-blocking copies on a host-lane thread (A: build-gpu) against run on the
# application's thread when the queue is idle (B: .device/libvast-base.so, the code before),
# alternating after a warm-up. One GPU: MatrixMul -n 4096 --rows 8192 and saxpy -n 128M
# --iterations 10 at 4x with the expert beside, and saxpy direct (default budget) with native
# beside, 5 rounds; a traced MatrixMul of each. Two GPUs: the compute preset's MatrixMul at 4x
# (multigpu.sh: one GPU and merged), 2 rounds each.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a /tmp/b /tmp/bB; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd; echo $PWD/.device/libvast-base.so > /tmp/b/vast.icd
cp -r build-gpu/. /tmp/bB/ && cp .device/libvast-base.so /tmp/bB/icd/libvast.so
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
pol() { case $1 in A) echo "OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a" ;;
                   B) echo "OCL_ICD_FILENAMES=$PWD/.device/libvast-base.so OCL_ICD_VENDORS=/tmp/b" ;; esac; }
declare -A ARGS=([MatrixMul]="-n 4096 --rows 8192" [saxpy]="-n 128M --iterations 10")
declare -A CHUNK=([MatrixMul]=256 [saxpy]=16000000)
declare -A MEM=([MatrixMul]=83886080 [saxpy]=256000000)
for s in MatrixMul saxpy; do
  for r in w 1 2 3 4 5; do
    line="$s 4x $r expert: $(build-gpu/samples/$s --platform NVIDIA ${ARGS[$s]} --partitioned --chunk ${CHUNK[$s]} | grep -E '^time' | cut -d' ' -f2)"
    for p in A B; do
      line+=" $p: $(env $(pol $p) VAST_DEVICE_MEMORY=${MEM[$s]} build-gpu/samples/$s --platform VAST ${ARGS[$s]} | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
    done
    echo "$line"
  done
done 2>&1 | tee $OUT/one.txt
for r in w 1 2 3 4 5; do
  line="saxpy direct $r native: $(build-gpu/samples/saxpy --platform NVIDIA ${ARGS[saxpy]} | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
  for p in A B; do
    line+=" $p: $(env $(pol $p) build-gpu/samples/saxpy --platform VAST ${ARGS[saxpy]} | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
  done
  echo "$line"
done 2>&1 | tee -a $OUT/one.txt
for p in A B; do
  env $(pol $p) VAST_TRACE=$OUT/MatrixMul-$p.trace.json VAST_DEVICE_MEMORY=${MEM[MatrixMul]} build-gpu/samples/MatrixMul --platform VAST ${ARGS[MatrixMul]} | grep -E '^time' | sed "s/^/traced $p /"
done 2>&1 | tee -a $OUT/one.txt
for r in 1 2; do
  for v in A B; do
    b=build-gpu; [ $v = B ] && b=/tmp/bB
    timeout 120 tests/bench/multigpu.sh --build $b --preset multigpu --samples MatrixMul --configs 4x --timeout 60 \
        --out /tmp/c$v$r > $OUT/compute$r$v.txt 2>&1
  done
done
for f in $OUT/compute*.txt; do echo "$(basename $f): $(grep -E '^Matrix' $f | tr -s ' ')"; done
