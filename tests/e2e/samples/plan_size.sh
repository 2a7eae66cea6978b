#!/bin/bash
# plan_size.sh: one sample directly on PoCL and through VAST (run_modes.sh: PASS, equal hashes)
# whose partitioned launches must not take more than N partitions in all (VAST_STATS'
# kernel lines): a check of the plan's shape where a planner rule once cut far more finely
# than the budget needs (stride.c: iteration ranges of one loop iteration each).
#
# usage: plan_size.sh --libvast PATH --icd-dir DIR --max-partitions N [--timeout S] -- SAMPLE [ARGS...]
# The caller's VAST_* (VAST_DEVICE_MEMORY, VAST_PAGE_SIZE, ...) pass through.
# Exit: 0 the hashes agree and the partitions are at most N (and more than 0), 1 otherwise,
# 2 usage error.
set -u
here=$(cd "$(dirname "$0")" && pwd)
libvast="" icd_dir="" max="" timeout_s=300
while [ $# -gt 0 ]; do
    case "$1" in
    --libvast) libvast="$2"; shift 2 ;;
    --icd-dir) icd_dir="$2"; shift 2 ;;
    --max-partitions) max="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "plan_size: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -ge 1 ] && [ -n "$libvast" ] && [ -n "$icd_dir" ] && [ -n "$max" ] || { echo "plan_size: usage error" >&2; exit 2; }
out=$(VAST_STATS=1 "$here/run_modes.sh" --libvast "$libvast" --icd-dir "$icd_dir" --modes direct,icd \
      --timeout "$timeout_s" -- "$@" 2>&1)
rc=$?
echo "$out"
[ "$rc" = 0 ] || { echo "plan_size: FAIL: the run through VAST differs from PoCL's (above)"; exit 1; }
parts=$(sed -n 's/^    vast: stats: kernel=.* mode=partitioned .*partitions=\([0-9]*\) .*/\1/p' <<<"$out" |
        awk '{ s += $1 } END { print s + 0 }')
[ "$parts" -gt 0 ] || { echo "plan_size: FAIL: no partitioned launch"; exit 1; }
[ "$parts" -le "$max" ] || { echo "plan_size: FAIL: $parts partitions, at most $max expected"; exit 1; }
echo "plan_size: PASS: $parts partitions (at most $max)"
