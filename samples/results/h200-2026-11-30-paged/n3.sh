#!/bin/bash
# n2 follow-up with a diagnostic build (extra spans "X ...": the enqueue of the paged kernel,
# the wait for its fault-log header, vast_paged_run, what follows it, the close): where the
# first paged launch's 3-4 ms after its kernel go. Paged NBody, 3 iterations, traced twice.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
A="-n 131072"
vast() { OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a "$@"; }
vast env VAST_FORCE_PAGED=1 build-gpu/samples/NBody --platform VAST $A >/dev/null
for r in 1 2; do
vast env VAST_FORCE_PAGED=1 VAST_TRACE=$OUT/n3-$r.trace.json build-gpu/samples/NBody --platform VAST $A --iterations 3 | grep -E '^time' | sed "s/^/traced $r /"
done
python3 - "$OUT" <<'PY'
import json, sys
for p in ("1", "2"):
    ev = json.load(open(f"{sys.argv[1]}/n3-{p}.trace.json"))["traceEvents"]
    ev = sorted([e for e in ev if e.get("ph") == "X"], key=lambda e: e["ts"])
    t0 = ev[0]["ts"]
    print(f"== {p}: spans (ms from the first)")
    for e in ev[:80]:
        print(f"  {(e['ts']-t0)/1e3:8.3f} {e['dur']/1e3:8.3f} {e['name']:24s} {e['args'].get('detail','')}")
PY
