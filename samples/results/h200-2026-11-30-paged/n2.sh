#!/bin/bash
# n1 follow-up: is forced paged NBody's first load (1.6 ms for 4 MiB) the page pool's first use
# (its chunks are made at the budget, and NVIDIA's OpenCL allocates a buffer at its first use)?
# Paged at the default budget against a 64 MiB one; 3 iterations traced (is "open" paid per
# launch?); VAST_STATS' pool line.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
A="-n 131072"
vast() { OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a "$@"; }
build-gpu/samples/NBody --platform NVIDIA $A > /dev/null; vast env VAST_FORCE_PAGED=1 build-gpu/samples/NBody --platform VAST $A >/dev/null
for r in 1 2 3; do
  line="round $r native: $(build-gpu/samples/NBody --platform NVIDIA $A | grep -E '^time' | cut -d' ' -f2)"
  for m in default 64M; do
    e=(VAST_FORCE_PAGED=1 VAST_STATS=1); [ $m = 64M ] && e+=(VAST_DEVICE_MEMORY=67108864)
    [ $r = 3 ] && e+=(VAST_TRACE=$OUT/n2-$m.trace.json)
    vast env "${e[@]}" build-gpu/samples/NBody --platform VAST $A > /tmp/o.txt 2>&1
    line+=" paged $m: $(grep -E '^time' /tmp/o.txt | cut -d' ' -f2)"
    [ $r = 3 ] && grep -E 'stats: (kernel|pool)' /tmp/o.txt | sed "s/^/$m /" >> $OUT/n2-stats.txt
  done
  echo "$line"
done 2>&1 | tee $OUT/n2.txt
vast env VAST_FORCE_PAGED=1 VAST_TRACE=$OUT/n2-iter3.trace.json build-gpu/samples/NBody --platform VAST $A --iterations 3 | grep -E '^time' | sed 's/^/traced 3 iterations /' | tee -a $OUT/n2.txt
cat $OUT/n2-stats.txt
python3 - "$OUT" <<'PY'
import json, sys
for p in ("default", "64M", "iter3"):
    ev = json.load(open(f"{sys.argv[1]}/n2-{p}.trace.json"))["traceEvents"]
    ev = sorted([e for e in ev if e.get("ph") == "X"], key=lambda e: e["ts"])
    t0 = ev[0]["ts"]
    print(f"== {p}: spans (ms from the first)")
    for e in ev[:60]:
        print(f"  {(e['ts']-t0)/1e3:8.3f} {e['dur']/1e3:8.3f} {e['name']:24s} {e['args'].get('detail','')}")
PY
