#!/bin/bash
# tests/bench/multigpu.sh: many devices as one (issue 14 item 3, VAST_MERGE_DEVICES=1) against
# one device. Every sample of a preset runs natively on the real platform's first device, then
# through VAST on one device and through the merged device over all of the platform's devices,
# in four configurations: direct (default budget), paged (VAST_FORCE_PAGED=1), 2x and 4x
# (oversubscribed: the data is 2x / 4x the budget; for the merged device the budget is the sum
# of its members', so each member gets data / (k x members)). In 2x and 4x one device also runs
# at a member's budget (one_m_s): real GPUs have a fixed memory each, so what a second GPU gives
# is one GPU at its memory against two GPUs at theirs (speedup_m); speedup compares the merged
# device with one device holding the whole merged budget. Prints one table row per sample and
# configuration: the times, the speed-ups, whether every output hash equals the native run's,
# and the partitions each member ran (from VAST_STATS).
# A benchmark, never a test: its figures go into the README by hand.
#
# usage: tests/bench/multigpu.sh --build DIR [options]
#   --build DIR        a build folder (samples in DIR/samples, DIR/icd/libvast.so, DIR/icd/vastinfo)
#   --platform NAME    the real platform, name substring (default "NVIDIA CUDA"; "Portable" on
#                      PoCL, with POCL_DEVICES="pthread pthread" for two devices)
#   --preset NAME|FILE samples/bench/presets/NAME.txt or a file (default small)
#   --samples A,B      only these samples of the preset
#   --configs A,B      of direct,paged,2x,4x (default all)
#   --timeout S        per run (default 600)
#   --out DIR          keep each run's stdout and stderr there (default: a temporary folder)
# The GPU machine (two GPUs of one platform, NVIDIA's OpenCL through CUDA's Khronos loader):
#   tests/bench/multigpu.sh --build build-release --preset large
# Exit: 0 when every run passed with the native hash, 1 otherwise, 2 usage error.
set -u
set -f
root=$(cd "$(dirname "$0")/../.." && pwd)
build="" real="NVIDIA CUDA" preset=small only="" configs="direct,paged,2x,4x" run_timeout=600 out=""
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build="$2"; shift 2 ;;
    --platform) real="$2"; shift 2 ;;
    --preset) preset="$2"; shift 2 ;;
    --samples) only="$2"; shift 2 ;;
    --configs) configs="$2"; shift 2 ;;
    --timeout) run_timeout="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "multigpu: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done
die() { echo "multigpu: $*" >&2; exit 2; }
[ -n "$build" ] && [ -d "$build/samples" ] || die "--build: no samples/ in '$build'"
build=$(readlink -f "$build")
libvast=$build/icd/libvast.so
[ -f "$libvast" ] || libvast=$build/libvast.so
[ -f "$libvast" ] || die "no libvast.so in $build/icd or $build"
vastinfo=$build/icd/vastinfo
case "$preset" in */*|*.txt) preset_file=$preset ;; *) preset_file=$root/samples/bench/presets/$preset.txt ;; esac
[ -f "$preset_file" ] || die "no preset '$preset'"
for c in ${configs//,/ }; do case "$c" in direct|paged|2x|4x) ;; *) die "unknown configuration '$c'" ;; esac; done
if [ -z "$out" ]; then out=$(mktemp -d "${TMPDIR:-/tmp}/multigpu.XXXXXX") || exit 2; fi
mkdir -p "$out/vendors" || die "cannot create '$out'"
echo "$libvast" > "$out/vendors/vast.icd"
export VAST_BACKEND=${VAST_BACKEND:-$real}
vast_env=(OCL_ICD_FILENAMES="$libvast" OCL_ICD_VENDORS="$out/vendors" VAST_STATS=1)

# The members of the merged device, as vastinfo shows them.
members=$(env "${vast_env[@]}" VAST_MERGE_DEVICES=1 "$vastinfo" 2>/dev/null | grep -c '^    runs launches on: ')
[ "$members" -ge 2 ] || die "the platform '$real' shows fewer than two devices to merge (vastinfo: $members)"

# run NAME BIN ARGS PLATFORM ENV...: runs one sample; sets r_status r_time r_hash r_parts.
run() {
    local name=$1 bin=$2 args=$3 plat=$4
    shift 4
    local so=$out/$name.stdout se=$out/$name.stderr
    # shellcheck disable=SC2086
    env -u LD_PRELOAD -u VAST_SAMPLE_PLATFORM -u VAST_FORCE_PAGED -u VAST_DEVICE_MEMORY -u VAST_MERGE_DEVICES "$@" \
        timeout -k 10 "$run_timeout" "$bin" --platform "$plat" $args > "$so" 2> "$se"
    local rc=$?
    r_time=$(sed -n 's/^time: \([0-9.]*\).*/\1/p' "$so" | tail -1)
    r_hash=$(sed -n 's/^hash: \([0-9a-f]*\)$/\1/p' "$so" | tail -1)
    r_parts=$(sed -n 's/^vast: stats: merged_member=.* partitions=\([0-9]*\)$/\1/p' "$se" | paste -sd/)
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then r_status=TIMEOUT
    elif [ "$rc" -ne 0 ] || ! grep -qx PASS "$so" || [ -z "$r_hash" ]; then r_status=FAIL
    elif [ "$plat" = VAST ] && ! grep -q '^device: VAST: ' "$so"; then r_status=NOTVAST
    else r_status=PASS; fi
}

status=0
row() { printf '%-16s %-7s %9s %9s %9s %9s %8s %9s  %-6s %s\n' "$@"; }
# speedup A B: A / B as "1.23x", or "-"
speedup() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else print "-" }'; }
row sample config native_s one_s one_m_s merged_s speedup speedup_m hashes member_partitions
while read -r sample rest; do
    [ -z "$sample" ] || [[ "$sample" == \#* ]] && continue
    [ -n "$only" ] && [[ ",$only," != *",$sample,"* ]] && continue
    args=""
    for w in ${rest%%#*}; do [[ "$w" == skip=* ]] || args+="${args:+ }$w"; done
    bin=$build/samples/$sample
    [ -x "$bin" ] || { echo "multigpu: $sample not built" >&2; status=1; continue; }
    # shellcheck disable=SC2086
    data=$(env -u OCL_ICD_FILENAMES timeout 120 "$bin" --platform __multigpu_probe__ $args 2>/dev/null |
           sed -n 's/^data: \([0-9]*\) bytes$/\1/p' | head -1)
    run "$sample.native" "$bin" "$args" "$real"
    native_s=${r_time:--} native_hash=$r_hash
    [ "$r_status" = PASS ] || native_hash=""
    for config in ${configs//,/ }; do
        one_env=() merged_env=() one_m_s=- one_m_hash=""
        case "$config" in
        paged) one_env=(VAST_FORCE_PAGED=1) merged_env=(VAST_FORCE_PAGED=1) ;;
        2x|4x)
            [ -n "$data" ] || { echo "multigpu: $sample: no 'data:' line" >&2; status=1; continue; }
            k=${config%x}
            one_env=(VAST_DEVICE_MEMORY=$((data / k)))
            merged_env=(VAST_DEVICE_MEMORY=$((data / (k * members)))) ;;
        esac
        run "$sample.$config.one" "$bin" "$args" VAST "${vast_env[@]}" "${one_env[@]}"
        one_s=$r_time one_status=$r_status one_hash=$r_hash
        case "$config" in
        2x|4x)
            run "$sample.$config.one_m" "$bin" "$args" VAST "${vast_env[@]}" "${merged_env[@]}"
            one_m_s=$r_time one_m_hash=$r_hash
            [ "$r_status" = PASS ] || { one_m_s=$r_status; status=1; } ;;
        esac
        run "$sample.$config.merged" "$bin" "$args" VAST "${vast_env[@]}" VAST_MERGE_DEVICES=1 "${merged_env[@]}"
        merged_s=$r_time merged_status=$r_status merged_hash=$r_hash merged_parts=$r_parts
        hashes=same
        if [ -z "$native_hash" ] || [ "$one_hash" != "$native_hash" ] || [ "$merged_hash" != "$native_hash" ] ||
            { [ -n "$one_m_hash" ] && [ "$one_m_hash" != "$native_hash" ]; }; then
            hashes=DIFFER
        fi
        [ "$one_status" = PASS ] || one_s=$one_status
        [ "$merged_status" = PASS ] || merged_s=$merged_status
        [ "$hashes" = same ] && [ "$one_status" = PASS ] && [ "$merged_status" = PASS ] || status=1
        row "$sample" "$config" "$native_s" "$one_s" "$one_m_s" "$merged_s" "$(speedup "$one_s" "$merged_s")" \
            "$(speedup "$one_m_s" "$merged_s")" "$hashes" "${merged_parts:--}"
    done
done < "$preset_file"
echo "multigpu: $members devices merged ($real); runs' output in $out"
exit "$status"
