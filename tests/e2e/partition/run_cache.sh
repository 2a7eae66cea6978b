#!/bin/sh
# run_cache.sh ICD_DIR BUDGET...: pyopencl_cache.py twice per budget with one fresh pyopencl
# cache folder (XDG_CACHE_HOME), so that the second run loads every program from the binaries
# the first one stored. Fails when a run fails, writes a "vast: error:" line, stores no
# binary, or (4M) does not run axpb partitioned. Exit 77 when pyopencl is missing.
set -u
icd=$1
shift
here=$(dirname "$0")
status=0
for budget in "$@"; do
    cache=$(mktemp -d)
    for run in 1 2; do
        out=$(XDG_CACHE_HOME=$cache OCL_ICD_VENDORS=$icd VAST_DEVICE_MEMORY=$budget VAST_PAGE_SIZE=4K \
              VAST_STATS=1 VAST_FORCE_PAGED=0 ${PYTHON:-/usr/bin/python3} "$here/pyopencl_cache.py" --budget "$budget" 2>&1)
        rc=$?
        [ $rc -eq 77 ] && { echo "$out"; rm -rf "$cache"; exit 77; }
        why=
        if [ $rc -ne 0 ]; then why="exit status $rc"
        elif printf '%s\n' "$out" | grep -q '^vast: error:'; then why="a vast: error: line"
        elif [ -z "$(find "$cache" -name binary | head -1)" ]; then why="pyopencl stored no binary"
        elif [ "$budget" = 4M ] && ! printf '%s\n' "$out" | grep -q 'kernel=axpb mode=partitioned'; then
            why="axpb did not run partitioned"
        fi
        if [ -n "$why" ]; then
            echo "FAIL budget $budget run $run: $why"
            printf '%s\n' "$out" | sed 's/^/    | /'
            status=1
        else
            echo "ok   budget $budget run $run ($(find "$cache" -name binary | wc -l) cached binaries)"
        fi
    done
    rm -rf "$cache"
done
exit $status
