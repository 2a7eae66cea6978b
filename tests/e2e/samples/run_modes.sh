#!/bin/bash
# run_modes.sh: run one sample (a) directly on PoCL, (b) through VAST as a vendor ICD,
# (c) under LD_PRELOAD=libvast.so, and check that every mode prints PASS with the same hash.
#
# usage: run_modes.sh [--libvast PATH] [--icd-dir DIR] [--modes direct,icd,preload]
#                     [--timeout S] -- SAMPLE [ARGS...]
#   --libvast   libvast.so (required when a VAST mode is asked for; missing = FAIL, never skip)
#   --icd-dir   folder holding vast.icd (one line: the absolute path of libvast.so); default:
#               a temporary folder written here
#   --modes     comma-separated subset of direct,icd,preload (default: all three)
#   --timeout   seconds per run (default $RUN_MODES_TIMEOUT or 600)
# Each mode must also prove where it ran: direct must not be on a VAST platform or device;
# icd and preload must print "platform: VAST..." and "device: VAST: ...". So a VAST that is
# missing, broken or not interposing fails here instead of silently testing PoCL twice.
# A VAST run that logs out-of-bounds accesses fails too: the samples stay in bounds, so such a
# line means a stale or misread fault record (whose loads read 0 and stores were dropped).
# The caller's environment (VAST_*, POCL_*, ...) passes through to every run.
# Exit: 0 all modes agree and PASS, 1 otherwise, 2 usage error.
set -u

libvast="" icd_dir="" modes="direct,icd,preload" timeout_s="${RUN_MODES_TIMEOUT:-600}"
while [ $# -gt 0 ]; do
    case "$1" in
    --libvast) libvast="$2"; shift 2 ;;
    --icd-dir) icd_dir="$2"; shift 2 ;;
    --modes) modes="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "run_modes: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -ge 1 ] || { echo "run_modes: no sample given (usage: run_modes.sh [opts] -- SAMPLE ARGS)" >&2; exit 2; }
sample="$1"; shift
[ -x "$sample" ] || { echo "run_modes: FAIL: sample '$sample' is not an executable" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/run_modes.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

needs_vast=0
case ",$modes," in *,icd,*|*,preload,*) needs_vast=1 ;; esac
if [ "$needs_vast" = 1 ]; then
    if [ -z "$libvast" ] || [ ! -f "$libvast" ]; then
        echo "run_modes: FAIL: libvast.so not found at '${libvast}' (--libvast); the VAST modes cannot run" >&2
        exit 1
    fi
    libvast=$(readlink -f "$libvast")
    if [ -z "$icd_dir" ]; then
        icd_dir="$tmp/vendors"
        mkdir -p "$icd_dir"
        echo "$libvast" > "$icd_dir/vast.icd"
    fi
    [ -f "$icd_dir/vast.icd" ] || { echo "run_modes: FAIL: no vast.icd in '$icd_dir'" >&2; exit 1; }
fi

# A sample built with AddressSanitizer needs libasan first in LD_PRELOAD.
asan_lib=$(ldd "$sample" 2>/dev/null | awk '/libasan\.so/ {print $3; exit}')

status=0
ref_hash="" ref_mode=""
for mode in ${modes//,/ }; do
    out="$tmp/$mode.out"
    case "$mode" in
    direct)
        env -u LD_PRELOAD -u OCL_ICD_VENDORS -u OCL_ICD_FILENAMES -u VAST_SAMPLE_PLATFORM \
            timeout "$timeout_s" "$sample" --platform pocl "$@" > "$out" 2>&1 ;;
    icd)
        env -u LD_PRELOAD -u OCL_ICD_FILENAMES -u VAST_SAMPLE_PLATFORM OCL_ICD_VENDORS="$icd_dir" \
            timeout "$timeout_s" "$sample" --platform VAST "$@" > "$out" 2>&1 ;;
    preload)
        env -u OCL_ICD_VENDORS -u OCL_ICD_FILENAMES -u VAST_SAMPLE_PLATFORM \
            LD_PRELOAD="${asan_lib:+$asan_lib:}$libvast" \
            timeout "$timeout_s" "$sample" --platform 0 "$@" > "$out" 2>&1 ;;
    *) echo "run_modes: unknown mode '$mode'" >&2; exit 2 ;;
    esac
    rc=$?
    echo "=== $mode: rc=$rc"
    sed 's/^/    /' "$out"
    why=""
    platform=$(sed -n 's/^platform: //p' "$out" | head -1)
    device=$(sed -n 's/^device: //p' "$out" | head -1)
    hash=$(sed -n 's/^hash: \([0-9a-f]\{16\}\)$/\1/p' "$out" | tail -1)
    if [ "$rc" -ne 0 ]; then why="exit code $rc"
    elif ! grep -qx PASS "$out"; then why="no PASS line"
    elif [ -z "$hash" ]; then why="no hash line"
    elif [ "$mode" = direct ] && { [[ "$platform" == *VAST* ]] || [[ "$device" == VAST* ]]; }; then
        why="direct run landed on VAST ($platform / $device)"
    elif [ "$mode" != direct ] && { [[ "$platform" != VAST* ]] || [[ "$device" != VAST:* ]]; }; then
        why="not running through VAST (platform '$platform', device '$device')"
    elif [ "$mode" != direct ] && grep -q '^vast: .*out of bounds' "$out"; then
        why="VAST reported out-of-bounds accesses of a sample that stays in bounds"
    elif [ -n "$ref_hash" ] && [ "$hash" != "$ref_hash" ]; then
        why="hash $hash differs from $ref_mode's $ref_hash"
    fi
    if [ -n "$why" ]; then
        echo "run_modes: FAIL: $mode: $why"
        status=1
    else
        echo "run_modes: ok: $mode (hash $hash)"
        [ -n "$ref_hash" ] || { ref_hash="$hash"; ref_mode="$mode"; }
    fi
done
[ "$status" = 0 ] && echo "run_modes: PASS: $(basename "$sample") ($modes) hash $ref_hash" \
                  || echo "run_modes: FAIL: $(basename "$sample")"
exit "$status"
