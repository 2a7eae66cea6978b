#!/bin/bash
# The page cache's chunks given to paged kernels only once they hold a frame (new: build-gpu)
# against all four always (base: .device/libvast-base.so, the code before); both with the
# diagnostic spans of n3 and the parts of a launch's "open" (X ...). One H200, VAST's and
# NVIDIA's caches warm: (1) the large preset's samples forced paged at the default budget,
# native beside, 3 rounds alternating after a warm-up; (2) the GPU memory a forced paged NBody
# (30 iterations) holds, sampled by nvidia-smi every 20 ms; (3) traced paged NBody runs, and
# MatrixMul at 4x (one chunk: nothing should change) with the expert beside.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a /tmp/b; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd; echo $PWD/.device/libvast-base.so > /tmp/b/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
lib() { case $1 in new) echo "OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a" ;; base) echo "OCL_ICD_FILENAMES=$PWD/.device/libvast-base.so OCL_ICD_VENDORS=/tmp/b" ;; esac; }
t() { grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' '; }
LIST="NBody:-n 131072|MatrixMul:-n 4096 --rows 8192|SobelFilter:--width 8192 --height 8192|MedianFilter:--width 8192 --height 8192|Reduction:-n 256M|vecadd:-n 128M|saxpy:-n 128M --iterations 10|BlackScholes:-n 64M --iterations 4|FDTD3d:-n 512 --iterations 4"
IFS='|' read -ra S <<< "$LIST"
echo "== (1) forced paged, default budget: time hash" | tee $OUT/p1.txt
for r in w 1 2 3; do
  for e in "${S[@]}"; do
    s=${e%%:*}; a=${e#*:}
    line="$r $s native: $(build-gpu/samples/$s --platform NVIDIA $a | t)"
    for l in base new; do line+=" $l: $(env $(lib $l) VAST_FORCE_PAGED=1 build-gpu/samples/$s --platform VAST $a | t)"; done
    echo "$line"
  done
done 2>&1 | tee -a $OUT/p1.txt
echo "== (2) GPU memory used (MiB) by forced paged NBody -n 131072 --iterations 30: idle, peak" | tee -a $OUT/p1.txt
for l in base new base new; do
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 20 > /tmp/smi.txt & sp=$!
  sleep 0.5; env $(lib $l) VAST_FORCE_PAGED=1 build-gpu/samples/NBody --platform VAST -n 131072 --iterations 30 > /tmp/o.txt; sleep 0.3
  kill $sp; wait $sp 2>/dev/null
  echo "$l: idle $(head -1 /tmp/smi.txt) peak $(sort -n /tmp/smi.txt | tail -1) ($(grep ^time /tmp/o.txt))"
done 2>&1 | tee -a $OUT/p1.txt
echo "== (3) traced paged NBody; MatrixMul 4x" | tee -a $OUT/p1.txt
for l in base new; do
  env $(lib $l) VAST_FORCE_PAGED=1 VAST_TRACE=$OUT/p1-NBody-$l.trace.json build-gpu/samples/NBody --platform VAST -n 131072 --iterations 3 | grep ^time | sed "s/^/traced $l /"
done 2>&1 | tee -a $OUT/p1.txt
for r in w 1 2 3; do
  line="MatrixMul 4x $r expert: $(build-gpu/samples/MatrixMul --platform NVIDIA -n 4096 --rows 8192 --partitioned --chunk 256 | t)"
  for l in base new; do line+=" $l: $(env $(lib $l) VAST_DEVICE_MEMORY=83886080 build-gpu/samples/MatrixMul --platform VAST -n 4096 --rows 8192 | t)"; done
  echo "$line"
done 2>&1 | tee -a $OUT/p1.txt
python3 - "$OUT" <<'PY' | tee -a $OUT/p1.txt
import json, sys
for p in ("base", "new"):
    ev = json.load(open(f"{sys.argv[1]}/p1-NBody-{p}.trace.json"))["traceEvents"]
    ev = sorted([e for e in ev if e.get("ph") == "X"], key=lambda e: e["ts"])
    t0 = ev[0]["ts"]
    print(f"== {p}: spans from the launches on (ms)")
    first = next(i for i, e in enumerate(ev) if e["args"].get("detail") == "launch")
    for e in ev[first:first + 45]:
        print(f"  {(e['ts']-t0)/1e3:8.3f} {e['dur']/1e3:8.3f} {e['name']:24s} {e['args'].get('detail','')}")
PY
