#!/bin/bash
# Second call on nvidia-h200-x2: the pins of a store shared by the merged device's members (pin
# domain, one real context; build-gpu with 3dd2dd1 applied) against pins for the first member only
# (.device/libvast-nodomain.so, the same code without backing.c's change), alternating; not run
# yet (README.md), two rounds each: saxpy and
# BlackScholes at 4x (large preset); the compute-bound preset at 4x once each.
source .device/setup.sh
export VAST_CACHE_DIR=/tmp/vc
cp -r build-gpu /tmp/bB && cp .device/libvast-nodomain.so /tmp/bB/icd/libvast.so
for r in 1 2; do
  for v in A B; do
    b=build-gpu; [ $v = B ] && b=/tmp/bB
    timeout 100 tests/bench/multigpu.sh --build $b --preset large --samples saxpy,BlackScholes --configs 4x \
        --timeout 60 --out /tmp/m$v$r > $OUT/round$r$v.txt 2>&1
  done
done
for v in A B; do
  b=build-gpu; [ $v = B ] && b=/tmp/bB
  timeout 100 tests/bench/multigpu.sh --build $b --preset multigpu --configs 4x --timeout 60 --out /tmp/c$v \
      > $OUT/compute$v.txt 2>&1
done
grep -h "stats: pool=" /tmp/mA2/saxpy.4x.merged.stderr /tmp/mB2/saxpy.4x.merged.stderr | cut -c1-300 > $OUT/saxpy_pools.txt
for f in $OUT/round*.txt $OUT/compute*.txt; do echo "$(basename $f): $(grep -E '^(saxpy|Black|Matrix|NBody)' $f | tr -s ' ' | tr '\n' ';')"; done
