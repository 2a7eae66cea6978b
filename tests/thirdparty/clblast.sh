#!/bin/bash
# clblast.sh: Debian's CLBlast test programs (package clblast-tests) directly on PoCL and through
# VAST, side by side. Each program checks CLBlast's results against a reference BLAS on the
# host; VAST passes a program when it exits 0 with no failed test case where PoCL has none, and
# VAST logs no line of a wrong or refused launch (out of bounds, cannot be paged, too large).
# Prints one table row per program and a closing "N passed, N failed" line; exit 1 on any failure.
#
# usage: clblast.sh --libvast PATH [--env "VAR=V ..."] [--timeout S] [--out DIR] [program ...]
#   default env: VAST_DEVICE_MEMORY=256K VAST_PAGE_SIZE=4K (the issue's configuration);
#   programs: names like xgemv (default: every /usr/bin/clblast_test_*).
# Run time on a 2-core development machine: about 25 min for the whole set at 256K
# (PoCL alone about 10 min); ctest label "long" (tests/thirdparty/CMakeLists.txt).
set -u
libvast="" vast_env="VAST_DEVICE_MEMORY=256K VAST_PAGE_SIZE=4K" timeout_s=900 out=""
progs=()
while [ $# -gt 0 ]; do
    case "$1" in
    --libvast) libvast=$(readlink -f "$2"); shift 2 ;;
    --env) vast_env="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) progs+=("$1"); shift ;;
    esac
done
[ -f "$libvast" ] || { echo "clblast: --libvast PATH to libvast.so is required" >&2; exit 2; }
ls /usr/bin/clblast_test_* >/dev/null 2>&1 || { echo "clblast: clblast-tests is not installed" >&2; exit 2; }
[ ${#progs[@]} -gt 0 ] || progs=($(ls /usr/bin/clblast_test_* | sed 's,.*/clblast_test_,,'))
out=${out:-$(mktemp -d)}
mkdir -p "$out/vendors"
echo "$libvast" > "$out/vendors/vast.icd"   # VAST alone: platform 0; it finds PoCL itself
export LC_ALL=C POCL_CACHE_DIR=${POCL_CACHE_DIR:-$(mktemp -d)}

# failed-case count of a log ("   N test(s) failed" per routine), or -1 when none was printed;
# CLBlast colours the line, so the number is taken where it stands, not as the first field
failed_cases() { awk 'match($0, /[0-9]+ test\(s\) failed/) {n += substr($0, RSTART) + 0; seen = 1}
                      END {print seen ? n : -1}' "$1"; }
passed_cases() { awk 'match($0, /[0-9]+ test\(s\) passed/) {n += substr($0, RSTART) + 0} END {print n + 0}' "$1"; }

bad_re='out of bounds|cannot be paged|alone touches|needs [0-9]+ pages|cannot run partitioned'
passed=0 failed=0
printf '| program | PoCL ok/failed | PoCL s | VAST ok/failed | VAST s | VAST bad log lines | verdict |\n|---|---|---|---|---|---|---|\n'
for p in "${progs[@]}"; do
    bin=/usr/bin/clblast_test_$p
    t0=$(date +%s.%N)
    timeout "$timeout_s" "$bin" -platform 0 -device 0 > "$out/$p.pocl.log" 2>&1; prc=$?
    t1=$(date +%s.%N)
    env $vast_env OCL_ICD_VENDORS="$out/vendors" timeout "$timeout_s" "$bin" -platform 0 -device 0 \
        > "$out/$p.vast.log" 2>&1; vrc=$?
    t2=$(date +%s.%N)
    pf=$(failed_cases "$out/$p.pocl.log") vf=$(failed_cases "$out/$p.vast.log")
    bad=$(grep -cE "vast: .*($bad_re)" "$out/$p.vast.log") # CLBlast prints progress before it on the line
    verdict=PASS
    if [ "$vrc" -ne 0 ] && [ "$prc" -eq 0 ]; then verdict="FAIL (exit $vrc)"
    elif [ "$vf" -lt 0 ] || { [ "$pf" -ge 0 ] && [ "$vf" -gt "$pf" ]; }; then verdict="FAIL ($vf failed)"
    elif [ "$bad" -gt 0 ]; then verdict="FAIL (log)"; fi
    [ "$verdict" = PASS ] && passed=$((passed + 1)) || failed=$((failed + 1))
    printf '| %s | %s/%s | %.1f | %s/%s | %.1f | %s | %s |\n' "$p" "$(passed_cases "$out/$p.pocl.log")" "$pf" \
        "$(echo "$t1 - $t0" | bc)" "$(passed_cases "$out/$p.vast.log")" "$vf" "$(echo "$t2 - $t1" | bc)" "$bad" "$verdict"
done
echo "logs: $out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
