#!/bin/bash
# traffic.sh PROGRAM CASE [MAX_RATIO]: test_mtraffic's CASE through VAST on one PoCL device,
# then on the merged device over two (VAST_MERGE_DEVICES=1), both with VAST_STATS=1 and the
# environment given (budget, page size). Both must pass (bytes equal to PoCL's), and the merged
# run must move at most MAX_RATIO (default 2) times the bytes (h2d + d2h, all pools) of the
# one-device run, load nothing of the read-only x (size 1200040) through a twin, and write back
# no owned page whose copy was stale; both members must run partitions. CASE disjoint must
# merge (twin bytes > 0) where the launch fits (no VAST_DEVICE_MEMORY: the members' halves
# meet inside a page; the planner's partitions at 1M end on page boundaries).
prog=$1 case=$2 max=${3:-2}
# Both without chains (VAST_CHAIN=0): iter's identical launches would chain, moving its data
# once (interpose/chain.c; tests/e2e/partition's chain.merged), where this measures what each
# launch of a merged device moves.
export VAST_CHAIN=0
one=$(POCL_DEVICES=pthread VAST_STATS=1 "$prog" "$case" 2>&1) || { echo "$one"; echo "FAIL: one device"; exit 1; }
# The members claim partitions as their lanes get to them, so under load one member can take all
# of a small launch's 3 partitions while the other still builds its paged program (PoCL builds
# it from source: VAST keeps no PoCL binaries). Every run must pass; up to 3 runs for one in
# which both members ran partitions.
both_ran() { [ "$(grep 'merged_member=' <<< "$two" | grep -c 'partitions=[1-9]')" -ge 2 ]; }
for attempt in 1 2 3; do
    two=$(POCL_DEVICES="pthread pthread" VAST_MERGE_DEVICES=1 VAST_STATS=1 "$prog" "$case" 2>&1) ||
        { echo "$two"; echo "FAIL: merged"; exit 1; }
    both_ran && break
    echo "merged run $attempt: one member ran every partition; again"
done
# sum KEY: KEY= summed over the pool lines (stdin)
sum() { awk -v k="$1=" '/vast: stats: pool=/ { for (i = 1; i <= NF; i++) if (index($i, k) == 1) s += substr($i, length(k) + 1) } END { printf "%d\n", s }'; }
moved1=$(( $(sum h2d_bytes <<< "$one") + $(sum d2h_bytes <<< "$one") ))
moved2=$(( $(sum h2d_bytes <<< "$two") + $(sum d2h_bytes <<< "$two") ))
twin=$(sum twin_h2d_bytes <<< "$two") merged=$(sum merged_d2h_bytes <<< "$two") stale=$(sum owned_stale_bytes <<< "$two")
xtwin=$(awk '/vast: stats: buffer bytes=1200040 / { for (i = 1; i <= NF; i++) if ($i ~ /^twin_bytes=/) s += substr($i, 12) } END { printf "%d\n", s }' <<< "$two")
parts=$(grep 'merged_member=' <<< "$two" | grep -o 'partitions=[0-9]*' | tr '\n' ' ')
echo "$case: one device moved $moved1 bytes, merged $moved2 (twin loads $twin, merged write-backs $merged, stale owned $stale, x through twins $xtwin; members' $parts)"
bad=0
[ "$(awk -v a="$moved2" -v b="$moved1" -v m="$max" 'BEGIN { print (a <= b * m) }')" = 1 ] || { echo "FAIL: the merged device moved more than $max x one device's bytes"; bad=1; }
[ "$xtwin" -eq 0 ] || { echo "FAIL: the read-only x was loaded through twins"; bad=1; }
[ "$stale" -eq 0 ] || { echo "FAIL: an owned page was written back over newer host bytes"; bad=1; }
[ "$case" != disjoint ] || [ -n "${VAST_DEVICE_MEMORY:-}" ] || [ "$twin" -gt 0 ] || { echo "FAIL: no page was merged: two members' page not twinned"; bad=1; }
both_ran || { echo "FAIL: not both members ran partitions"; bad=1; }
exit $bad
