#!/bin/bash
# Three pinning policies, alternating after a warm-up: A pin stores of VAST's own at first use
# (build-gpu), B pin at creation (.device/libvast-base.so), C no background pinning (B's
# library, VAST_PIN_BACKGROUND=0). One GPU: MatrixMul -n 4096 --rows 8192 and saxpy -n 128M
# --iterations 10 at 4x, 3 rounds with the expert. Two GPUs: the compute preset's MatrixMul
# merged at 4x (a member's budget data / 8), 3 rounds, the last traced.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a /tmp/b; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd; echo $PWD/.device/libvast-base.so > /tmp/b/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
declare -A ARGS=([MatrixMul]="-n 4096 --rows 8192" [saxpy]="-n 128M --iterations 10")
declare -A CHUNK=([MatrixMul]=256 [saxpy]=16000000)
declare -A MEM=([MatrixMul]=83886080 [saxpy]=256000000)
pol() { # pol A|B|C  -> env for the policy
  case $1 in A) echo "OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a" ;;
             B) echo "OCL_ICD_FILENAMES=$PWD/.device/libvast-base.so OCL_ICD_VENDORS=/tmp/b" ;;
             C) echo "OCL_ICD_FILENAMES=$PWD/.device/libvast-base.so OCL_ICD_VENDORS=/tmp/b VAST_PIN_BACKGROUND=0" ;; esac; }
for s in MatrixMul saxpy; do
  for r in w 1 2 3; do
    line="$s $r expert: $(build-gpu/samples/$s --platform NVIDIA ${ARGS[$s]} --partitioned --chunk ${CHUNK[$s]} | grep -E '^time' | cut -d' ' -f2)"
    for p in A B C; do
      line+=" $p: $(env $(pol $p) VAST_DEVICE_MEMORY=${MEM[$s]} build-gpu/samples/$s --platform VAST ${ARGS[$s]} | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
    done
    echo "$line"
  done
done 2>&1 | tee $OUT/one.txt
args="-n 8192 --rows 65536 --check sample"
data=$(build-gpu/samples/MatrixMul --platform __multigpu_probe__ $args 2>/dev/null | sed -n 's/^data: \([0-9]*\) bytes$/\1/p' | head -1)
env $(pol B) VAST_DEVICE_MEMORY=$((data/8)) VAST_MERGE_DEVICES=1 build-gpu/samples/MatrixMul --platform VAST $args > /dev/null 2>&1
for r in 1 2 3; do
  line="merged $r:"
  for p in A B C; do
    t=(); [ $r = 3 ] && t=(VAST_TRACE=$OUT/merged$p.json VAST_STATS=1)
    line+=" $p: $(env $(pol $p) "${t[@]}" VAST_DEVICE_MEMORY=$((data/8)) VAST_MERGE_DEVICES=1 build-gpu/samples/MatrixMul --platform VAST $args 2>/tmp/e$p | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
  done
  echo "$line"
done 2>&1 | tee $OUT/merged.txt
grep -h "kernel=matrixMul" /tmp/eA /tmp/eB /tmp/eC | cut -c1-330 > $OUT/merged_stats.txt
