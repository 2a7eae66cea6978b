#!/bin/bash
# Forced paged NBody -n 131072 with the device prepared for paged launches at clBuildProgram
# (vast_paged_prepare, from VAST_BUILD_WAIT's builds: the device lane's page-table block, the
# scratch frame and chunk 0's commit made on the lane) against the same library without it
# (XNOPREP=1, a switch of this build only), native beside, 6 rounds alternating after a
# warm-up; then one traced run of each, with this build's extra spans around a read's flush
# and copy (X flush, X copy; pagecache_read, not landed). Run twice: t2-background.txt with the
# preparation left running in the background, t2.txt with clBuildProgram waiting for it.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA CUDA_VISIBLE_DEVICES=0
V=(OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a VAST_FORCE_PAGED=1)
t() { grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' '; }
for r in w 1 2 3 4 5 6; do
  echo "$r native: $(build-gpu/samples/NBody --platform NVIDIA -n 131072 | t) prepared: $(env "${V[@]}" build-gpu/samples/NBody --platform VAST -n 131072 | t) not: $(env "${V[@]}" XNOPREP=1 build-gpu/samples/NBody --platform VAST -n 131072 | t)"
done 2>&1 | tee $OUT/t2.txt
for x in prepared not; do
  e=(); [ $x = not ] && e=(XNOPREP=1)
  echo "$x: $(env "${V[@]}" "${e[@]}" VAST_TRACE=$OUT/t2-$x.trace.json build-gpu/samples/NBody --platform VAST -n 131072 | t)"
  python3 - "$OUT/t2-$x.trace.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ev = sorted([e for e in ev if e.get("ph") == "X"], key=lambda e: e["ts"])
t0 = ev[0]["ts"]
for e in ev:
    print(f"    {(e['ts']-t0)/1e3:9.3f} {e['dur']/1e3:8.3f} {e.get('tid','')} {e['name'][:28]:28s} {str(e['args'].get('detail',''))[:70]}")
PY
done 2>&1 | tee -a $OUT/t2.txt
