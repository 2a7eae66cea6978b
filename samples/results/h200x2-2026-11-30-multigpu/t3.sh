#!/bin/bash
# Forced paged NBody -n 131072 (prepared at clBuildProgram, as t2): its two 2 MiB reads copy
# into the sample's fresh memory at about 2 GB/s on one thread (t2: 1.0 ms each, first-touch
# page faults). Host copies split over the copy pool from 4 MiB (default) against from 1 MiB and
# 256 KiB (XPMIN, a switch of this build only), native beside, 6 rounds after a warm-up; one
# traced run at 1 MiB.
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA CUDA_VISIBLE_DEVICES=0
V=(OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a VAST_FORCE_PAGED=1)
t() { grep -E '^time|^hash' | cut -d' ' -f2 | tr '\n' ' '; }
for r in w 1 2 3 4 5 6; do
  line="$r native: $(build-gpu/samples/NBody --platform NVIDIA -n 131072 | t)"
  for m in 4M 1M 256K; do line+=" $m: $(env "${V[@]}" XPMIN=$m build-gpu/samples/NBody --platform VAST -n 131072 | t)"; done
  echo "$line"
done 2>&1 | tee $OUT/t3.txt
echo "1M traced: $(env "${V[@]}" XPMIN=1M VAST_TRACE=$OUT/t3-1M.trace.json build-gpu/samples/NBody --platform VAST -n 131072 | t)" | tee -a $OUT/t3.txt
python3 - "$OUT/t3-1M.trace.json" <<'PY' | tee -a $OUT/t3.txt
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ev = sorted([e for e in ev if e.get("ph") == "X"], key=lambda e: e["ts"])
t0 = ev[0]["ts"]
for e in ev:
    print(f"    {(e['ts']-t0)/1e3:9.3f} {e['dur']/1e3:8.3f} {e.get('tid','')} {e['name'][:28]:28s} {str(e['args'].get('detail',''))[:70]}")
PY
