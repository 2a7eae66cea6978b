#!/bin/bash
# The background pinner held from a launch's start until its first kernel is on the device
# (pagecache_hold_background_pins), with the fast ring: N (build-gpu) against B (2962819,
# .device/libvast-base.so: neither) and P (N with VAST_PIN=0). One GPU: MatrixMul -n 4096
# --rows 8192 and saxpy -n 128M --iterations 10 at 4x with the expert, 3 rounds after a
# warm-up. Merged over both GPUs at 4x (a member's budget data / 8): s3's eight samples, N and
# B alternating, 2 rounds (P too for MatrixMul), one GPU N once for the compute samples; one
# traced merged MatrixMul of N.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a /tmp/b; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd; echo $PWD/.device/libvast-base.so > /tmp/b/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
N=(OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a)
B=(OCL_ICD_FILENAMES=$PWD/.device/libvast-base.so OCL_ICD_VENDORS=/tmp/b)
declare -A ARGS=([MatrixMul]="-n 4096 --rows 8192" [saxpy]="-n 128M --iterations 10")
declare -A CHUNK=([MatrixMul]=256 [saxpy]=16000000)
declare -A MEM=([MatrixMul]=83886080 [saxpy]=256000000)
for s in MatrixMul saxpy; do
  one() { env "$@" VAST_DEVICE_MEMORY=${MEM[$s]} build-gpu/samples/$s --platform VAST ${ARGS[$s]} | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' '; }
  for r in w 1 2 3; do
    line="$s 4x $r expert: $(build-gpu/samples/$s --platform NVIDIA ${ARGS[$s]} --partitioned --chunk ${CHUNK[$s]} | grep -E '^time' | cut -d' ' -f2)"
    line+=" N: $(one "${N[@]}") B: $(one "${B[@]}") P: $(one "${N[@]}" VAST_PIN=0)"
    echo "$line"
  done
done 2>&1 | tee $OUT/s5-one.txt
while read -r s args; do
  case "$s" in ''|\#*) continue ;; esac
  data=$(build-gpu/samples/$s --platform __multigpu_probe__ $args 2>/dev/null | sed -n 's/^data: \([0-9]*\) bytes$/\1/p' | head -1)
  m=(VAST_DEVICE_MEMORY=$((data/8)))
  run() { env "$@" build-gpu/samples/$s --platform VAST $args 2>/dev/null | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' '; }
  line="$s ($args)"
  run "${N[@]}" "${m[@]}" VAST_MERGE_DEVICES=1 > /dev/null
  for r in 1 2; do
    line+=" | N: $(run "${N[@]}" "${m[@]}" VAST_MERGE_DEVICES=1) B: $(run "${B[@]}" "${m[@]}" VAST_MERGE_DEVICES=1)"
    case "$s" in MatrixMul) line+=" P: $(run "${N[@]}" "${m[@]}" VAST_MERGE_DEVICES=1 VAST_PIN=0)" ;; esac
  done
  case "$s$args" in *--check*) line+=" | one GPU N: $(run "${N[@]}" "${m[@]}")" ;; esac
  echo "$line"
done <<'LIST' 2>&1 | tee $OUT/s5-merged.txt
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
env "${N[@]}" VAST_DEVICE_MEMORY=$((data/8)) VAST_MERGE_DEVICES=1 VAST_TRACE=$OUT/s5-merged-N.trace.json build-gpu/samples/MatrixMul --platform VAST $args | grep -E '^time' | sed 's/^/traced N /' | tee -a $OUT/s5-merged.txt
python3 - "$OUT" <<'PY' 2>&1 | tee -a $OUT/s5-merged.txt
import json, sys, collections
ev = json.load(open(f"{sys.argv[1]}/s5-merged-N.trace.json"))["traceEvents"]
ev = sorted([e for e in ev if e.get("ph") == "X"], key=lambda e: e["ts"])
t0 = ev[0]["ts"]
ms = lambda x: (x - t0) / 1e3
for e in ev:
    d = e["args"].get("detail", "")
    if d in ("host command", "launch", "open") or e["name"] == "staging ring":
        print(f"  {ms(e['ts']):9.3f} {e['dur']/1e3:9.3f} {e['name']} {d}")
g = collections.defaultdict(list)
for e in ev:
    d = "" if e["name"].startswith("staged") else e["args"].get("detail", "")
    g[(e["name"], d, e["tid"])].append(e)
for (name, d, tid), es in sorted(g.items(), key=lambda kv: kv[1][0]["ts"]):
    if len(es) > 2 or name == "pin":
        print(f"  {name:14s} {d[:30]:30s} tid {tid:3d}: {len(es):4d} spans {sum(e['dur'] for e in es)/1e3:9.3f} ms, from {ms(es[0]['ts']):9.3f} to {ms(es[-1]['ts']+es[-1]['dur']):9.3f}")
PY
