#!/bin/bash
# Where forced paged NBody (-n 131072) loses against native (issue 17: 0.62 of native warm in
# ../h200-2026-11-29-goals/, its paged kernel 13.9 ms of a 31 ms run). Native, VAST direct and
# VAST forced paged, alternating, 4 rounds after a warm-up, VAST with VAST_STATS=1; then one
# traced paged run, and paged with 3 iterations (the first launch against the next ones).
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
A="-n 131072"
vast() { OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a "$@"; }
for r in w 1 2 3 4; do
  line="NBody $r native: $(build-gpu/samples/NBody --platform NVIDIA $A | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
  line+=" direct: $(vast build-gpu/samples/NBody --platform VAST $A | grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' ')"
  vast env VAST_FORCE_PAGED=1 VAST_STATS=1 build-gpu/samples/NBody --platform VAST $A > /tmp/o.txt 2>&1
  line+=" paged: $(grep -E '^time|^hash' /tmp/o.txt | cut -d' ' -f2 | tr '\n' ' ')"
  echo "$line"; grep -E 'stats: (kernel|cache)' /tmp/o.txt | sed "s/^/  $r /"
done 2>&1 | tee $OUT/n1.txt
vast env VAST_FORCE_PAGED=1 VAST_TRACE=$OUT/n1-paged.trace.json build-gpu/samples/NBody --platform VAST $A | grep -E '^time' | sed 's/^/traced paged /' | tee -a $OUT/n1.txt
vast env VAST_TRACE=$OUT/n1-direct.trace.json build-gpu/samples/NBody --platform VAST $A | grep -E '^time' | sed 's/^/traced direct /' | tee -a $OUT/n1.txt
for r in 1 2; do
  echo "iterations 3: native $(build-gpu/samples/NBody --platform NVIDIA $A --iterations 3 | grep -E '^time' | cut -d' ' -f2) paged $(vast env VAST_FORCE_PAGED=1 build-gpu/samples/NBody --platform VAST $A --iterations 3 | grep -E '^time' | cut -d' ' -f2)"
done 2>&1 | tee -a $OUT/n1.txt
python3 - "$OUT" <<'PY'
import json, sys
for p in ("paged", "direct"):
    ev = json.load(open(f"{sys.argv[1]}/n1-{p}.trace.json"))["traceEvents"]
    ev = sorted([e for e in ev if e.get("ph") == "X"], key=lambda e: e["ts"])
    t0 = ev[0]["ts"]
    print(f"== {p}: spans (ms from the first)")
    for e in ev[:60]:
        print(f"  {(e['ts']-t0)/1e3:8.3f} {e['dur']/1e3:8.3f} {e['name']:24s} {e['args'].get('detail','')}")
PY
