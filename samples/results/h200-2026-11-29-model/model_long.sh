#!/bin/bash
# Model-based sequences' long run on the GPU machine's CPUs: W workers over disjoint seed ranges,
# batches of B sequences (B/20 per configuration) until DEADLINE seconds; PoCL 5.0 of the machine
# as the reference and as VAST's real device.  usage: model_long.sh FIRST_SEED WORKERS DEADLINE [B]
first=$1 workers=$2 deadline=$3 batch=${4:-100}
source .device/setup.sh
export LC_ALL=C
pocl=$(ls /usr/lib/x86_64-linux-gnu/libpocl.so.2* 2>/dev/null | head -1)
# this machine's ICD loader (ocl-icd of Ubuntu 24.04) takes OCL_ICD_VENDORS as a folder only with
# a trailing slash, and reads /etc/OpenCL/vendors (PoCL) as well
rm -f /etc/OpenCL/vendors/vast.icd
mv=/tmp/mv/; mkdir -p $mv; echo "$PWD/build-gpu/icd/libvast.so" > $mv/vast.icd
# PoCL 5.0's pthread device asserts in pocl_release_dlhandle_cache when one kernel runs with
# several specialisations (global offset zero or not, grid widths) in flight: its release matches
# the cache entry by hash and local size only. The basic device runs one command at a time, yet
# in the model's pattern (three queues, user events, two contexts in one PoCL) it aborts too.
export MODEL_ICD_DIR=$mv
if [ "$REFERENCE" = nvidia ]; then
  # NVIDIA's driver as the reference and as VAST's real device (valid calls only: test_model.c)
  export MODEL_REFERENCE=NVIDIA VAST_BACKEND=NVIDIA
else
  export VAST_BACKEND=Portable POCL_DEVICES=basic
fi
echo "pocl: $pocl; $(nproc) cpus; $(ls /usr/lib/x86_64-linux-gnu/pocl 2>/dev/null | head -3 | tr '\n' ' ')"
mkdir -p $OUT/logs
t0=$(date +%s)
# can it fail here: one batch with a byte of VAST's trace flipped
POCL_CACHE_DIR=/tmp/pc-flip VAST_CACHE_DIR=/tmp/vc-flip .device/model_sequences --sequences 20 --first 7 --steps 40 --flip > $OUT/logs/flip.log 2>&1
nf=$(grep -c 'flipped byte detected' $OUT/logs/flip.log); echo "flip: $nf of 20 detected"
[ "$nf" = 20 ] || { grep -E "FAIL|CRASH" $OUT/logs/flip.log | head; }
clinfo -l
span=$(( 1000000 / workers ))
for w in $(seq 0 $((workers - 1))); do
  (
    s=$(( first + w * span ))
    export POCL_CACHE_DIR=/tmp/pc-$w VAST_CACHE_DIR=/tmp/vc-$w
    while [ $(( $(date +%s) - t0 )) -lt $deadline ]; do
      left=$(( deadline + 30 - ($(date +%s) - t0) ))
      timeout $left .device/model_sequences --sequences $batch --first $s --steps 60 > /tmp/b.$w.$s.log 2>&1
      rc=$?
      [ $rc = 124 ] && { echo "worker $w seeds $s- cut at the time limit" >> $OUT/logs/w$w.txt; break; }
      echo "worker $w seeds $s-$((s + batch - 1)) rc $rc $(tail -1 /tmp/b.$w.$s.log)" >> $OUT/logs/w$w.txt
      [ $rc = 0 ] || cp /tmp/b.$w.$s.log $OUT/logs/fail.$w.$s.log
      s=$(( s + batch ))
    done
  ) &
done
wait
cat $OUT/logs/w*.txt > $OUT/batches.txt
echo "batches $(wc -l < $OUT/batches.txt), rc!=0: $(grep -v ' cut ' $OUT/batches.txt | grep -vc ' rc 0 ')"
awk '{for(i=1;i<=NF;i++) if($i=="sequences" && $(i+1)=="of") n+=$(i-1)} END {print "sequences", n}' $OUT/batches.txt
awk '/ rc 0 /{for(i=1;i<=NF;i++) if($i=="sequences" && $(i+1)=="of") n+=$(i-1)} END {print "sequences equal", n}' $OUT/batches.txt
cd $OUT/logs && tar czf ../logs.tgz . && cd .. && rm -rf logs
echo "wall $(( $(date +%s) - t0 )) s"
