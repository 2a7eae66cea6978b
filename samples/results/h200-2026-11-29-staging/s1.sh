#!/bin/bash
# Why a staged load runs slowly (issue 17; ../h200x2-2026-11-29-queued/ q2: MatrixMul's first
# partition load took 19 ms staged against 2.1 ms pinned). The library (build-gpu) traces every
# staged call (its bytes, the time copying into slots and waiting for slot transfers) and the
# making of the ring. MatrixMul -n 4096 --rows 8192 at 4x, D (defaults) and P (VAST_PIN=0), 3
# rounds after a warm-up with VAST_STATS=1, the last round traced; the expert beside.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
ARGS="-n 4096 --rows 8192"; MEM=83886080
vast() { OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a "$@"; }
pol() { case $1 in D) echo "VAST_PIN=1" ;; P) echo "VAST_PIN=0" ;; esac; }
for r in w 1 2 3; do
  line="MatrixMul 4x $r expert: $(build-gpu/samples/MatrixMul --platform NVIDIA $ARGS --partitioned --chunk 256 | grep -E '^time' | cut -d' ' -f2)"
  for p in D P; do
    tr=""; [ $r = 3 ] && tr="VAST_TRACE=$OUT/s1-MatrixMul-$p.trace.json"
    vast env $(pol $p) $tr VAST_STATS=1 VAST_DEVICE_MEMORY=$MEM build-gpu/samples/MatrixMul --platform VAST $ARGS > /tmp/o.txt 2>&1
    line+=" $p: $(grep -E '^time|^hash' /tmp/o.txt | cut -d' ' -f2 | tr '\n' ' ')"
    [ $r = 3 ] && grep -E 'stats: (staging|pool|kernel)' /tmp/o.txt | sed "s/^/$p /" >> $OUT/s1-stats.txt
  done
  echo "$line"
done 2>&1 | tee $OUT/s1.txt
python3 - "$OUT" <<'PY'
import json, sys
for p in "DP":
    ev = json.load(open(f"{sys.argv[1]}/s1-MatrixMul-{p}.trace.json"))["traceEvents"]
    ev = sorted([e for e in ev if e.get("ph") == "X"], key=lambda e: e["ts"])
    t0 = ev[0]["ts"]
    print(f"== {p}: first 40 spans (ms from the first)")
    for e in ev[:40]:
        print(f"  {(e['ts']-t0)/1e3:8.3f} {e['dur']/1e3:8.3f} {e['name']:14s} {e['args'].get('detail','')}")
    st = [e for e in ev if e["name"].startswith("staged")]
    if st:
        print(f"  staged calls {len(st)}, their ms {sum(e['dur'] for e in st)/1e3:.3f}")
PY
