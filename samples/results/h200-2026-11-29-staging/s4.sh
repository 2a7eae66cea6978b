#!/bin/bash
# Where the merged device's MatrixMul (compute preset, 4x at a member's budget) loses with
# its stores pinned (s3: D 1.00-1.03 s, P 0.92 s): one traced run of each after a warm-up,
# with VAST_STATS=1, and a summary of each trace (the host commands, the background pins,
# the launch, each device's partitions, the staged calls).
source .device/setup.sh >/dev/null 2>&1
mkdir -p /tmp/a; echo $PWD/build-gpu/icd/libvast.so > /tmp/a/vast.icd
export VAST_CACHE_DIR=/tmp/vc CUDA_CACHE_PATH=/tmp/cc VAST_BACKEND=NVIDIA
V=(OCL_ICD_FILENAMES=$PWD/build-gpu/icd/libvast.so OCL_ICD_VENDORS=/tmp/a)
args="-n 8192 --rows 65536 --check sample"
data=$(build-gpu/samples/MatrixMul --platform __multigpu_probe__ $args 2>/dev/null | sed -n 's/^data: \([0-9]*\) bytes$/\1/p' | head -1)
m=(VAST_DEVICE_MEMORY=$((data/8)) VAST_MERGE_DEVICES=1)
env "${V[@]}" "${m[@]}" build-gpu/samples/MatrixMul --platform VAST $args > /dev/null 2>&1
for p in 1 0; do
  n=$([ $p = 1 ] && echo D || echo P)
  env "${V[@]}" "${m[@]}" VAST_PIN=$p VAST_STATS=1 VAST_TRACE=$OUT/s4-merged-$n.trace.json build-gpu/samples/MatrixMul --platform VAST $args 2>&1 | grep -E '^time|^hash|stats: (staging|pool|kernel)' | sed "s/^/$n /"
done 2>&1 | tee $OUT/s4.txt
python3 - "$OUT" <<'PY' 2>&1 | tee -a $OUT/s4.txt
import json, sys, collections
for n in "DP":
    ev = json.load(open(f"{sys.argv[1]}/s4-merged-{n}.trace.json"))["traceEvents"]
    ev = sorted([e for e in ev if e.get("ph") == "X"], key=lambda e: e["ts"])
    t0 = ev[0]["ts"]
    ms = lambda x: (x - t0) / 1e3
    print(f"== {n}")
    for e in ev:
        d = e["args"].get("detail", "")
        if d in ("host command", "launch", "open", "enqueue: capture and admission") or e["name"] == "staging ring":
            print(f"  {ms(e['ts']):9.3f} {e['dur']/1e3:9.3f} {e['name']} {d}")
    g = collections.defaultdict(list)
    for e in ev:
        d = "" if e["name"].startswith("staged") else e["args"].get("detail", "")
        g[(e["name"], d, e["tid"])].append(e)
    for (name, d, tid), es in sorted(g.items(), key=lambda kv: kv[1][0]["ts"]):
        if len(es) > 2 or name == "pin":
            print(f"  {name:14s} {d[:30]:30s} tid {tid:3d}: {len(es):4d} spans {sum(e['dur'] for e in es)/1e3:9.3f} ms, from {ms(es[0]['ts']):9.3f} to {ms(es[-1]['ts']+es[-1]['dur']):9.3f}")
PY
