#!/bin/bash
# n3 found the first enqueue of the paged kernel taking 3.0-3.7 ms (later ones 0.05 ms):
# NVIDIA's driver loading the program's module at its first launch. Does CUDA_MODULE_LOADING=EAGER
# (the CUDA driver's switch) move it to the build, natively and through VAST? NBody native and
# forced paged, alternating, 3 rounds each way; one traced paged run each way (diagnostic build).
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
A="-n 131072"
vast() { OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a "$@"; }
vast env VAST_FORCE_PAGED=1 build-gpu/samples/NBody --platform VAST $A >/dev/null
for r in 1 2 3; do
  line="round $r"
  for m in LAZY EAGER; do
    line+=" | $m native $(env CUDA_MODULE_LOADING=$m build-gpu/samples/NBody --platform NVIDIA $A | grep -E '^time' | cut -d' ' -f2)"
    line+=" paged $(vast env CUDA_MODULE_LOADING=$m VAST_FORCE_PAGED=1 build-gpu/samples/NBody --platform VAST $A | grep -E '^time' | cut -d' ' -f2)"
    line+=" direct $(vast env CUDA_MODULE_LOADING=$m build-gpu/samples/NBody --platform VAST $A | grep -E '^time' | cut -d' ' -f2)"
  done
  echo "$line"
done
for m in LAZY EAGER; do
  vast env CUDA_MODULE_LOADING=$m VAST_FORCE_PAGED=1 VAST_TRACE=$OUT/n4-$m.trace.json build-gpu/samples/NBody --platform VAST $A | grep -E '^time' | sed "s/^/traced $m /"
done
python3 - "$OUT" <<'PY'
import json, sys
for p in ("LAZY", "EAGER"):
    ev = json.load(open(f"{sys.argv[1]}/n4-{p}.trace.json"))["traceEvents"]
    ev = sorted([e for e in ev if e.get("ph") == "X"], key=lambda e: e["ts"])
    t0 = ev[0]["ts"]
    print(f"== {p}: spans (ms from the first)")
    for e in ev[:40]:
        print(f"  {(e['ts']-t0)/1e3:8.3f} {e['dur']/1e3:8.3f} {e['name']:24s} {e['args'].get('detail','')}")
PY
