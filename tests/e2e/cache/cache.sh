#!/bin/bash
# cache.sh: VAST's persistent kernel cache (interpose/kcache.c) seen from processes. One case a
# call, each on a fresh VAST_CACHE_DIR, SpMV partitioned (paged and inspector variants) against
# its direct run on PoCL (same hash):
#   warm        two runs: the first translates and builds, the second (VAST_STATS) has cache
#               hits and 0 translations, 0 source builds;
#   concurrent  4 processes at once on the empty folder: all PASS, every entry valid
#               afterwards, and a fifth run builds nothing;
#   corrupt     entries truncated and with a flipped byte: a miss (rebuilt), never a crash;
#               the folder is valid again afterwards;
#   bound       VAST_CACHE_MAX below what the program stores: correct results, the folder
#               within the bound;
#   auto        VAST_CACHE_BINARIES at its default: on PoCL only the translation is kept (PoCL
#               compiles every kernel of a program to hand out its binary; CLBlast's xtrsm
#               waited minutes for that), and a second run translates nothing.
# The other cases keep binaries (VAST_CACHE_BINARIES=1), as on every driver but PoCL.
# usage: cache.sh CASE LIBVAST CHECK_ENTRIES SPMV
set -u
case_="$1" libvast="$2" check="$3" spmv="$4"
args=(--rows 20011 --width 16 --cols 30011)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vast-cache-e2e.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/vendors" "$tmp/cache" "$tmp/pocl"
echo "$(readlink -f "$libvast")" > "$tmp/vendors/vast.icd"
fail() { echo "cache.sh: FAIL: $case_: $*"; exit 1; }

ref=$(env -u OCL_ICD_VENDORS -u LD_PRELOAD "$spmv" --platform pocl "${args[@]}" | sed -n 's/^hash: //p')
[ -n "$ref" ] || fail "no hash from the direct run"

# run N: one SpMV through VAST, partitioned (1 MiB budget, 4 KiB pages); its output in $tmp/N.out.
# PoCL's cache folder is the case's own: PoCL 3.1 aborts now and then (an assertion in
# pocl_binary.c, "len > 0") when it loads a program binary while other processes build the same
# program in the same POCL_CACHE_DIR, as the cases did when ctest ran two of them at once.
run() {
    env -u LD_PRELOAD OCL_ICD_VENDORS="$tmp/vendors" VAST_CACHE_DIR="$tmp/cache" VAST_STATS=1 POCL_CACHE_DIR="$tmp/pocl" \
        VAST_DEVICE_MEMORY=1M VAST_PAGE_SIZE=4K VAST_FORCE_PAGED=1 VAST_CACHE_BINARIES=1 "${@:2}" \
        "$spmv" --platform VAST "${args[@]}" > "$tmp/$1.out" 2>&1
    local rc=$?
    grep -q '^platform: VAST' "$tmp/$1.out" || { cat "$tmp/$1.out"; fail "run $1 not through VAST"; }
    [ $rc -eq 0 ] && grep -qx PASS "$tmp/$1.out" || { cat "$tmp/$1.out"; fail "run $1: exit $rc"; }
    [ "$(sed -n 's/^hash: //p' "$tmp/$1.out")" = "$ref" ] || fail "run $1: hash differs from PoCL's $ref"
    grep -q 'mode=partitioned' "$tmp/$1.out" || fail "run $1 did not partition"
}
# stat N KEY: the value of KEY on run N's cache statistics line
stat() { sed -n "s/^vast: stats: cache=.* $2=\([0-9.]*\).*/\1/p" "$tmp/$1.out"; }
builds_nothing() {
    [ "$(stat "$1" translations)" = 0 ] && [ "$(stat "$1" source_builds)" = 0 ] &&
        [ "$(stat "$1" translation_hits)" -ge 1 ] && [ "$(stat "$1" binary_hits)" -ge 2 ] ||
        { grep '^vast: stats: cache' "$tmp/$1.out"; fail "run $1 built something (or missed)"; }
}
valid() { "$check" "$tmp/cache" "$@" || fail "cache entries not valid"; }

case "$case_" in
warm)
    run 1
    [ "$(stat 1 translations)" = 1 ] && [ "$(stat 1 source_builds)" = 2 ] || fail "first run: $(grep 'stats: cache' "$tmp/1.out")"
    run 2
    builds_nothing 2
    grep 'stats: cache' "$tmp/1.out" "$tmp/2.out"
    valid ;;
concurrent)
    for i in 1 2 3 4; do run $i & done
    for i in 1 2 3 4; do wait -n || fail "a concurrent run failed"; done
    valid
    run 5
    builds_nothing 5 ;;
corrupt)
    run 1
    entries=("$tmp"/cache/*.vc)
    [ ${#entries[@]} = 3 ] || fail "expected 3 entries, found ${#entries[@]}"
    truncate -s 100 "${entries[0]}"
    python3 -c "import sys; f=open(sys.argv[1],'r+b'); f.seek(200); b=f.read(1); f.seek(200); f.write(bytes([b[0]^1]))" "${entries[1]}"
    : > "${entries[2]}"
    run 2
    [ "$(stat 2 translations)" = 1 ] && [ "$(stat 2 source_builds)" = 2 ] || fail "damaged entries did not miss: $(grep 'stats: cache' "$tmp/2.out")"
    valid
    run 3
    builds_nothing 3 ;;
bound)
    max=100000 # the translation (~16 KB) and one binary (~72-81 KB) fit, not all three
    run 1 VAST_CACHE_MAX=$max
    valid --max $max
    run 2 VAST_CACHE_MAX=$max
    valid --max $max
    [ "$(stat 2 source_builds)" -ge 1 ] || fail "more was kept than the bound holds"
    run 3 VAST_CACHE_MAX=64 # smaller than any entry: nothing is stored, results still right
    [ "$(stat 3 stored)" = 0 ] || fail "stored past the bound" ;;
auto)
    run 1 VAST_CACHE_BINARIES=auto
    [ "$(stat 1 translations)" = 1 ] && [ "$(stat 1 source_builds)" = 2 ] && [ "$(stat 1 stored)" = 1 ] ||
        fail "first run: $(grep 'stats: cache' "$tmp/1.out")"
    run 2 VAST_CACHE_BINARIES=auto
    [ "$(stat 2 translations)" = 0 ] && [ "$(stat 2 translation_hits)" = 1 ] && [ "$(stat 2 binary_hits)" = 0 ] &&
        [ "$(stat 2 stored)" = 0 ] || fail "second run: $(grep 'stats: cache' "$tmp/2.out")"
    entries=("$tmp"/cache/*.vc)
    [ ${#entries[@]} = 1 ] || fail "expected the translation alone, found ${#entries[@]} entries"
    valid ;;
*) echo "cache.sh: unknown case $case_"; exit 2 ;;
esac
echo "cache.sh: PASS: $case_"
