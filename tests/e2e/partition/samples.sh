#!/bin/bash
# samples.sh: one sample through VAST (ICD mode) at device budgets that are fractions of its
# working set, against the direct PoCL run's hash (partitioned execution, issue 5).
#
# usage: samples.sh --run-modes PATH --libvast PATH [--icd-dir DIR] --page SIZE
#                   [--fractions 2,4,16] [--refuse F,F --kernel NAME] [--require-flag FLAG]
#                   [--wrong-hash] [--timeout S] -- SAMPLE [ARGS...]
#   --page        VAST_PAGE_SIZE for the VAST runs (4K, 64K, ...)
#   --fractions   budgets: the working set (the sample's "data: N bytes" line in the direct
#                 run) divided by each, rounded down to the page size, at least one page;
#                 0 = no budget at all (the data fits: direct mode)
#   --refuse      fractions at which one work-group alone needs more than the budget: the run
#                 must pass on the overdraft (VAST_OVERDRAFT's default: frames borrowed past the
#                 budget, VAST_STATS overdrafts >= 1) and, with VAST_OVERDRAFT=0, fail cleanly (sample exit 2, CL_OUT_OF_RESOURCES; or, where VAST runs
#                 the launch asynchronously and the sample's next blocking call reports it,
#                 CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) with a "vast: error:" line naming
#                 --kernel and the work-group (not "not implemented"), never PASS, no crash
#   --refuse-at-enqueue  the refusals must come from clEnqueueNDRangeKernel itself (the
#                 sample's "error: clEnqueueNDRangeKernel(...) failed: CL_OUT_OF_RESOURCES"):
#                 kernels whose work-items meet (barriers, __local memory) and whose page sets
#                 need no data are judged before anything runs
#   --require-flag  skip (exit 77) when `SAMPLE --help` does not list FLAG
#   --host-plans  the partitioned launches' page sets must come from the host (VAST_STATS
#                 host_plans >= 1: the kernel's accesses are affine, translate.h)
#   --wrong-hash  compare with a deliberately wrong hash (the comparison must then fail)
# Every kept run must be a VAST run (run_modes.sh checks "platform: VAST"), PASS with the
# direct run's hash, and VAST_STATS must show a launch with mode=partitioned and
# partitions >= 2 (so a budget that happens to fit cannot pass unnoticed).
# Exit: 0 all as expected, 1 otherwise, 2 usage, 77 skipped.
set -u
run_modes="" libvast="" icd_dir="" page="" fractions="2,4,16" refuse="" kernel="" require_flag=""
wrong_hash=0 timeout_s=300 host_plans=0 at_enqueue=0
while [ $# -gt 0 ]; do
    case "$1" in
    --run-modes) run_modes="$2"; shift 2 ;;
    --libvast) libvast="$2"; shift 2 ;;
    --icd-dir) icd_dir="$2"; shift 2 ;;
    --page) page="$2"; shift 2 ;;
    --fractions) fractions="$2"; shift 2 ;;
    --refuse) refuse="$2"; shift 2 ;;
    --kernel) kernel="$2"; shift 2 ;;
    --require-flag) require_flag="$2"; shift 2 ;;
    --wrong-hash) wrong_hash=1; shift ;;
    --host-plans) host_plans=1; shift ;;
    --refuse-at-enqueue) at_enqueue=1; shift ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "samples.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -ge 1 ] && [ -n "$page" ] && [ -n "$run_modes" ] || { sed -n '2,28p' "$0" >&2; exit 2; }
[ -z "$refuse" ] || [ -n "$kernel" ] || { echo "samples.sh: --refuse needs --kernel" >&2; exit 2; }
sample="$1"; shift
name=$(basename "$sample")

to_bytes() {
    local v="${1%[KkMmGg]}" s="${1: -1}"
    case "$s" in K|k) echo $((v << 10)) ;; M|m) echo $((v << 20)) ;; G|g) echo $((v << 30)) ;; *) echo "$1" ;; esac
}
page_bytes=$(to_bytes "$page")

if [ -n "$require_flag" ] && ! "$sample" --help 2>&1 | grep -q -- "$require_flag"; then
    echo "SKIP: $name has no $require_flag flag yet"
    exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/partition_samples.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
vast_opts=(--libvast "$libvast")
[ -n "$icd_dir" ] && vast_opts+=(--icd-dir "$icd_dir")

# The reference: PoCL directly.
env -u VAST_DEVICE_MEMORY -u VAST_PAGE_SIZE "$run_modes" --modes direct --timeout "$timeout_s" -- \
    "$sample" "$@" > "$tmp/direct.out" 2>&1
rc=$?
ws=$(sed -n 's/^ *data: \([0-9]*\) bytes$/\1/p' "$tmp/direct.out" | head -1)
ref=$(sed -n 's/^run_modes: ok: direct (hash \([0-9a-f]*\))$/\1/p' "$tmp/direct.out")
if [ "$rc" -ne 0 ] || [ -z "$ws" ] || [ -z "$ref" ]; then
    cat "$tmp/direct.out"
    echo "samples.sh: FAIL: $name: the direct run failed or printed no data:/hash line"
    exit 1
fi
if [ "$wrong_hash" = 1 ]; then
    last=${ref: -1}
    ref="${ref%?}$([ "$last" = 0 ] && echo 1 || echo 0)"
fi
echo "samples.sh: $name $*: working set $ws bytes, direct hash $ref, page $page"

status=0
for frac in ${fractions//,/ }; do
    if [ "$frac" = 0 ]; then
        budget=0
    else
        budget=$(( ws / frac / page_bytes * page_bytes ))
        [ "$budget" -ge "$page_bytes" ] || budget=$page_bytes
    fi
    runs=pass
    case ",$refuse," in *,"$frac",*) runs="overdraft refuse" ;; esac
    for expect in $runs; do
    od=auto
    [ "$expect" = refuse ] && od=0
    out="$tmp/icd.$frac.$expect.out"
    VAST_DEVICE_MEMORY=$budget VAST_PAGE_SIZE=$page_bytes VAST_STATS=1 VAST_FORCE_PAGED=0 VAST_OVERDRAFT=$od \
        "$run_modes" "${vast_opts[@]}" --modes icd --timeout "$timeout_s" -- "$sample" "$@" > "$out" 2>&1
    rc=$?
    hash=$(sed -n 's/^run_modes: ok: icd (hash \([0-9a-f]*\))$/\1/p' "$out")
    stats=$(grep -E '^ *vast: stats: .*mode=partitioned' "$out" | head -3 | sed 's/^ *//')
    why=""
    if [ "$expect" != refuse ]; then
        if [ "$rc" -ne 0 ] || [ -z "$hash" ]; then why="the VAST run failed (run_modes exit $rc)"
        elif [ "$hash" != "$ref" ]; then why="hash $hash differs from the direct run's $ref"
        elif [ "$frac" != 0 ] && ! grep -qE '^ *vast: stats: .*mode=partitioned .*partitions=([2-9]|[1-9][0-9]+)( |$)' "$out"; then
            why="no VAST_STATS line with mode=partitioned and partitions >= 2"
        elif [ "$frac" != 0 ] && [ "$host_plans" = 1 ] && ! grep -qE '^ *vast: stats: .*mode=partitioned .*host_plans=[1-9]' "$out"; then
            why="the page sets did not come from the host (no host_plans >= 1)"
        elif [ "$expect" = overdraft ] && ! grep -qE '^ *vast: stats: .*mode=partitioned .*overdrafts=[1-9]' "$out"; then
            why="no VAST_STATS line with mode=partitioned and overdrafts >= 1 (the overdraft was not taken)"
        fi
    else
        line=$(grep -E '^ *vast: error: ' "$out" | grep -iF -- "$kernel" | grep -iE 'work-group|work group|workgroup|cannot be paged' \
               | grep -viF 'not implemented' | head -1)
        if grep -qE '^ *PASS$' "$out"; then why="expected a refusal, but the sample printed PASS"
        elif ! grep -q '^=== icd: rc=2$' "$out"; then why="expected the sample's clean setup error (exit 2), got: $(grep '^=== icd: rc=' "$out")"
        elif ! grep -qE 'CL_OUT_OF_RESOURCES|CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST' "$out"; then
            why="no CL_OUT_OF_RESOURCES (or, the launch failing asynchronously, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) in the output"
        elif [ "$at_enqueue" = 1 ] && ! grep -qE 'error: clEnqueueNDRangeKernel.* failed: CL_OUT_OF_RESOURCES' "$out"; then
            why="the refusal did not come from clEnqueueNDRangeKernel itself: $(grep -E '^ *error: ' "$out" | head -1)"
        elif ! grep -qE '^ *platform: VAST' "$out"; then why="the run did not go through VAST"
        elif [ -z "$line" ]; then why="no 'vast: error:' line naming kernel '$kernel' and the work-group (or why it cannot be paged)"
        fi
    fi
    label="ws/$frac budget $((budget >> 10))K"
    [ "$frac" = 0 ] && label="no budget"
    [ "$expect" = pass ] || label="$label VAST_OVERDRAFT=$od"
    if [ -z "$why" ]; then
        echo "ok   $name page $page $label: $([ "$expect" != refuse ] && echo "hash $hash" || echo "refused: ${line#"${line%%vast:*}"}")"
        [ -n "$stats" ] && echo "$stats" | sed 's/^/       /'
    else
        echo "FAIL $name page $page $label ($expect expected): $why"
        sed 's/^/    | /' "$out"
        status=1
    fi
    done
done
[ "$status" = 0 ] && echo "samples.sh: PASS: $name page $page" || echo "samples.sh: FAIL: $name page $page"
exit "$status"
