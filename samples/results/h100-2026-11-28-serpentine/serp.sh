#!/bin/bash
# GPU call: saxpy over 2 x 45 GiB on one H100 (real oversubscription, default budget), one
# library and environment per run:  serp.sh TAG LIBDIR [NAME=VALUE ...]
source .device/setup.sh >/dev/null 2>&1
tag=$1 lib=$2; shift 2
n=${SERP_N:-12079595521} its=${SERP_ITS:-5} tmo=${SERP_TMO:-200}
mkdir -p $lib/v && echo "$PWD/$lib/icd/libvast.so" > $lib/v/vast.icd
start=$SECONDS
env OCL_ICD_FILENAMES="$PWD/$lib/icd/libvast.so" OCL_ICD_VENDORS="$PWD/$lib/v" VAST_BACKEND="NVIDIA CUDA" VAST_STATS=1 VAST_LOG=info \
  VAST_TRACE=$OUT/serp.$tag.trace.json "$@" \
  timeout -k 5 "$tmo" build-gpu/samples/saxpy --platform VAST -n "$n" --iterations "$its" --host-ptr 1 \
  > $OUT/serp.$tag.stdout 2> $OUT/serp.$tag.stderr
echo "== $tag ($lib $*): rc=$? wall=$((SECONDS - start)) s"
cat $OUT/serp.$tag.stdout; grep -E "stats: (kernel|pool)" $OUT/serp.$tag.stderr | cut -c1-420
