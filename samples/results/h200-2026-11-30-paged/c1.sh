#!/bin/bash
# With NVIDIA's compile cache cold and VAST's warm, where forced paged NBody's first launch waits
# (issue 17: 0.06 of native cold in ../h200-2026-11-29-goals/): p1's base library (the spans of
# p1-diagnostic.patch: the paged kernel's enqueue among them), VAST_STATS (build_s, critical_s:
# the time the launch waited for its variants' build), a fresh CUDA_CACHE_PATH per run, 3 runs;
# native with a fresh cache beside.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/b; echo $PWD/.device/libvast-base.so > /tmp/b/vast.icd
export VAST_CACHE_DIR=/tmp/vc VAST_BACKEND=NVIDIA
V=(OCL_ICD_FILENAMES=$PWD/.device/libvast-base.so OCL_ICD_VENDORS=/tmp/b)
env "${V[@]}" CUDA_CACHE_PATH=/tmp/ccw VAST_FORCE_PAGED=1 build-gpu/samples/NBody --platform VAST -n 131072 > /dev/null
for r in 1 2 3; do
  echo "round $r native cold: $(CUDA_CACHE_PATH=/tmp/cn$r build-gpu/samples/NBody --platform NVIDIA -n 131072 | grep ^time)"
  env "${V[@]}" CUDA_CACHE_PATH=/tmp/cv$r VAST_FORCE_PAGED=1 VAST_STATS=1 VAST_TRACE=$OUT/c1-$r.trace.json build-gpu/samples/NBody --platform VAST -n 131072 2>&1 | grep -E "^time|stats: (kernel|cache)" | sed 's/^/  /' | cut -c1-400
  python3 - "$OUT/c1-$r.trace.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ev = sorted([e for e in ev if e.get("ph") == "X"], key=lambda e: e["ts"])
t0 = ev[0]["ts"]
for e in ev:
    if e["name"] in ("X enqueue kernel", "X open_plan") or e["args"].get("detail") in ("launch", "open", "partition") or "build" in e["name"] or "build" in str(e["args"].get("detail", "")):
        print(f"    {(e['ts']-t0)/1e3:9.3f} {e['dur']/1e3:9.3f} {e['name']:24s} {e['args'].get('detail','')}")
PY
done 2>&1 | tee $OUT/c1.txt
