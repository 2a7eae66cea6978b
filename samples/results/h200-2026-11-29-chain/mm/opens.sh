#!/bin/bash
# saxpy forced paged (10 launches): the 'open' spans with the tables made per launch (HEAD) and kept (new)
source .device/setup.sh
mkdir -p /tmp/v
for lib in $PWD/libvast-head.so $PWD/build-gpu/icd/libvast.so; do
  echo $lib > /tmp/v/vast.icd
  V="OCL_ICD_FILENAMES=$lib OCL_ICD_VENDORS=/tmp/v VAST_BACKEND=NVIDIA VAST_FORCE_PAGED=1 VAST_CACHE_DIR=/tmp/vc-$(basename $lib) CUDA_CACHE_PATH=/tmp/cc"
  for i in 1 2 3 4; do env $V build-gpu/samples/saxpy --platform VAST -n 128M --iterations 10 | grep time; done
  env $V VAST_TRACE=/tmp/t.json build-gpu/samples/saxpy --platform VAST -n 128M --iterations 10 | grep time
  python3 -c "
import json; t=json.load(open('/tmp/t.json')); ev=t['traceEvents'] if isinstance(t,dict) else t
o=[e['dur']/1e3 for e in ev if e.get('args',{}).get('detail')=='open']; print('$(basename $lib) open ms:', ' '.join('%.2f'%x for x in o))"
done
