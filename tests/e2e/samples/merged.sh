#!/bin/bash
# merged.sh: one sample through VAST with VAST_MERGE_DEVICES=1 on PoCL showing N devices,
# against the same sample run directly on PoCL (run_modes.sh: PASS and equal hashes), and
# proof that the merged device's launches ran on every member: VAST_STATS=1 must print one
# merged_member line per PoCL device, each with partitions > 0, and the sample's device must
# be the merged one ("VAST: N x ..."). --noload: every member's pool line must also show pages
# given frames without a load (noload_bytes > 0: an output the kernel overwrites whole, owned
# by the member that writes it) and no stale whole write-back (owned_stale_bytes=0).
#
# usage: merged.sh --libvast PATH --icd-dir DIR --devices N [--timeout S] [--noload] -- SAMPLE [ARGS...]
# The caller's VAST_* (VAST_FORCE_PAGED, VAST_DEVICE_MEMORY, ...) pass through.
# Exit: 0 the hashes agree (every run) and every member ran partitions (one run of up to
# three), 1 otherwise, 2 usage error.
set -u
here=$(cd "$(dirname "$0")" && pwd)
libvast="" icd_dir="" devices=2 timeout_s=300 noload=0
while [ $# -gt 0 ]; do
    case "$1" in
    --libvast) libvast="$2"; shift 2 ;;
    --icd-dir) icd_dir="$2"; shift 2 ;;
    --devices) devices="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --noload) noload=1; shift ;;
    --) shift; break ;;
    *) echo "merged: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -ge 1 ] && [ -n "$libvast" ] && [ -n "$icd_dir" ] || { echo "merged: usage error" >&2; exit 2; }
pocl=""
for ((i = 0; i < devices; i++)); do pocl="$pocl pthread"; done
# Members claim partitions as each reaches one: on a loaded machine one member can take every
# partition of a short launch before another is scheduled (CI's vecadd.merged_budget: 25 of 25
# on the first member, 0.04 s in all). The hashes must agree in every run; that every member
# ran partitions is asked of one run of up to three.
# PoCL 3.1-5.x can abort by itself when one kernel runs with different grid widths or offsets in
# flight at once, as a merged device's members do: its work-group function cache finds an entry by
# hash, local size, grid width and offset class but releases the first with the same hash and
# local size ("pocl_release_dlhandle_cache: Assertion 'found->ref_count > 0'"; fixed in PoCL 6.0;
# samples/results/h200-2026-11-28-model-pocl5/). That abort, and only it, is run again, once,
# without counting as one of the three runs.
pocl_abort=0 try=0
while [ "$try" -lt 3 ]; do
    try=$((try + 1))
    out=$(POCL_DEVICES="${pocl# }" VAST_MERGE_DEVICES=1 VAST_STATS=1 \
          "$here/run_modes.sh" --libvast "$libvast" --icd-dir "$icd_dir" --modes direct,icd --timeout "$timeout_s" -- "$@" 2>&1)
    rc=$?
    echo "$out"
    if [ "$rc" != 0 ] && [ "$pocl_abort" = 0 ] &&
        grep -q "pocl_release_dlhandle_cache: Assertion .found->ref_count > 0' failed" <<<"$out"; then
        pocl_abort=1
        echo "merged: run $try: PoCL aborted in its own work-group function cache (its defect, above): run again once"
        try=$((try - 1))
        continue
    fi
    [ "$rc" = 0 ] || { echo "merged: FAIL: the merged device's run differs from PoCL's (above)"; exit 1; }
    grep -q "^    device: VAST: $devices x " <<<"$out" \
        || { echo "merged: FAIL: the sample did not run on a merged device of $devices members"; exit 1; }
    if [ "$noload" = 1 ]; then
        pools=$(grep '^    vast: stats: pool=' <<<"$out")
        [ "$(grep -c . <<<"$pools")" = "$devices" ] && ! grep -q ' noload_bytes=0 ' <<<"$pools" &&
            ! grep -qv ' owned_stale_bytes=0$\| owned_stale_bytes=0 ' <<<"$pools" \
            || { echo "merged: FAIL: a member loaded what the kernel overwrites, or wrote back a stale page (pool lines above)"; exit 1; }
    fi
    members=$(grep -c '^    vast: stats: merged_member=' <<<"$out")
    [ "$members" = "$devices" ] || { echo "merged: FAIL: $members merged_member lines, expected $devices"; exit 1; }
    idle=$(grep '^    vast: stats: merged_member=' <<<"$out" | grep -c ' partitions=0$')
    [ "$idle" = 0 ] && { echo "merged: PASS: $(basename "$1") on $devices merged devices (run $try)"; exit 0; }
    echo "merged: run $try: $idle member device(s) ran no partition"
done
echo "merged: FAIL: $idle member device(s) ran no partition, in 3 runs"
exit 1
