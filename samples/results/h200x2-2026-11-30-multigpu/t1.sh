#!/bin/bash
# Where forced paged NBody -n 131072 still loses to native (issue 17), the library as it lands
# (build-gpu): native 3 runs, then 3 traced forced paged runs (VAST_TRACE; spans listed).
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA CUDA_VISIBLE_DEVICES=0
V=(OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a)
env "${V[@]}" VAST_FORCE_PAGED=1 build-gpu/samples/NBody --platform VAST -n 131072 > /dev/null
for r in 1 2 3; do echo "native: $(build-gpu/samples/NBody --platform NVIDIA -n 131072 | grep ^time)"; done | tee $OUT/t1.txt
for r in 1 2 3; do
  echo "paged $r: $(env "${V[@]}" VAST_FORCE_PAGED=1 VAST_STATS=1 VAST_TRACE=$OUT/t1-$r.trace.json build-gpu/samples/NBody --platform VAST -n 131072 2>$OUT/t1-$r.stderr | grep ^time)"
  python3 - "$OUT/t1-$r.trace.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ev = sorted([e for e in ev if e.get("ph") == "X"], key=lambda e: e["ts"])
t0 = ev[0]["ts"]
for e in ev:
    print(f"    {(e['ts']-t0)/1e3:9.3f} {e['dur']/1e3:8.3f} {e.get('tid','')} {e['name'][:28]:28s} {str(e['args'].get('detail',''))[:70]}")
PY
done 2>&1 | tee -a $OUT/t1.txt
