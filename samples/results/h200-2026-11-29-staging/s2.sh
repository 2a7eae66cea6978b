#!/bin/bash
# The making of the staging ring (s1: 14.5 ms before MatrixMul's first staged load): each
# slot's memory (mmap, memset) and pin (USE_HOST_PTR wrapper) traced; P (VAST_PIN=0) with
# plain slots and with XSLOT_HUGE=1 (slots advised MADV_HUGEPAGE; experiment only), 2 rounds.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
ARGS="-n 4096 --rows 8192"; MEM=83886080
vast() { OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a "$@"; }
vast env VAST_PIN=0 VAST_DEVICE_MEMORY=$MEM build-gpu/samples/MatrixMul --platform VAST $ARGS >/dev/null 2>&1
for r in 1 2; do
  for h in "" XSLOT_HUGE=1; do
    vast env VAST_PIN=0 $h VAST_TRACE=/tmp/t.json VAST_DEVICE_MEMORY=$MEM build-gpu/samples/MatrixMul --platform VAST $ARGS | grep -E '^time' | sed "s/^/round $r ${h:-plain}: /"
    python3 - <<'PY'
import json
ev = json.load(open("/tmp/t.json"))["traceEvents"]
ev = sorted([e for e in ev if e.get("ph") == "X"], key=lambda e: e["ts"])
t0 = ev[0]["ts"]
for e in ev:
    if e["name"] in ("slot memory", "slot pin", "copy threads", "staging ring", "launch", "open") or e["name"].startswith("staged") and e["dur"] > 1000:
        print(f"  {(e['ts']-t0)/1e3:8.3f} {e['dur']/1e3:8.3f} {e['name']:14s} {e['args'].get('detail','')}")
PY
  done
done 2>&1 | tee $OUT/s2.txt
