#!/bin/bash
# The ring made fast (its slots one THP-advised mapping committed by the copy threads, then
# pinned slot by slot): q2/q4 again (../h200x2-2026-11-29-queued/), D (defaults) against P
# (VAST_PIN=0, everything staged). One GPU: MatrixMul -n 4096 --rows 8192 and saxpy -n 128M
# --iterations 10 at 4x with the expert, 3 rounds after a warm-up, P traced once (s3-ring.txt).
# Merged over both GPUs at 4x (a member's budget data / 8): q4's eight samples, 2 rounds, one
# GPU D and P once for the compute samples.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
V=(OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a)
declare -A ARGS=([MatrixMul]="-n 4096 --rows 8192" [saxpy]="-n 128M --iterations 10")
declare -A CHUNK=([MatrixMul]=256 [saxpy]=16000000)
declare -A MEM=([MatrixMul]=83886080 [saxpy]=256000000)
for s in MatrixMul saxpy; do
  for r in w 1 2 3; do
    line="$s 4x $r expert: $(build-gpu/samples/$s --platform NVIDIA ${ARGS[$s]} --partitioned --chunk ${CHUNK[$s]} | grep -E '^time' | cut -d' ' -f2)"
    for p in 1 0; do
      line+=" $([ $p = 1 ] && echo D || echo P): $(env "${V[@]}" VAST_PIN=$p VAST_DEVICE_MEMORY=${MEM[$s]} build-gpu/samples/$s --platform VAST ${ARGS[$s]} | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
    done
    echo "$line"
  done
done 2>&1 | tee $OUT/s3-one.txt
env "${V[@]}" VAST_PIN=0 VAST_TRACE=/tmp/t.json VAST_DEVICE_MEMORY=${MEM[MatrixMul]} build-gpu/samples/MatrixMul --platform VAST ${ARGS[MatrixMul]} | grep -E '^time'
python3 - <<'PY' 2>&1 | tee $OUT/s3-ring.txt
import json
ev = json.load(open("/tmp/t.json"))["traceEvents"]
ev = sorted([e for e in ev if e.get("ph") == "X"], key=lambda e: e["ts"])
t0 = ev[0]["ts"]
for e in ev[:30]:
    print(f"  {(e['ts']-t0)/1e3:8.3f} {e['dur']/1e3:8.3f} {e['name']:14s} {e['args'].get('detail','')}")
PY
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
done <<'LIST' 2>&1 | tee $OUT/s3-merged.txt
MatrixMul -n 8192 --rows 65536 --check sample
NBody -n 1048576 --iterations 2 --check sample
saxpy -n 128M --iterations 10
BlackScholes -n 64M --iterations 4
vecadd -n 128M
Reduction -n 256M
SpMV --rows 4M --width 32 --cols 4M
FDTD3d -n 512 --iterations 4
LIST
