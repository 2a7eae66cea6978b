#!/bin/bash
# Replays, on this machine's PoCL, every child of the GPU machine's long run that did not end
# equal there (an abort inside PoCL 5.0 or a difference): each child is five sequences, seeds
# S, S+20, ..., S+80 of one configuration, run again as one child of model_sequences.
# usage: replay_children.sh LIST WORKER WORKERS   (LIST: lines "budget page forced S", from
#   the FAIL lines of the run's logs; MODEL_ICD_DIR: a folder with vast.icd and PoCL's icd;
#   MODEL: the model_sequences binary). Prints one line per child: its configuration, first
#   seed, exit status and the child's last line.
list=$1 w=$2 n=$3
export LC_ALL=C POCL_CACHE_DIR=${POCL_CACHE_DIR:-$(mktemp -d)} VAST_CACHE_DIR=${VAST_CACHE_DIR:-$(mktemp -d)}
export OCL_ICD_VENDORS=$MODEL_ICD_DIR
awk -v w="$w" -v n="$n" 'NR % n == w' "$list" | while read -r budget page forced s; do
  out=$(VAST_DEVICE_MEMORY=$budget VAST_PAGE_SIZE=$page VAST_FORCE_PAGED=$forced \
        timeout 600 "$MODEL" --child "$s" 5 60 0 2>&1); rc=$?
  echo "$budget $page $forced $s rc $rc $(echo "$out" | tail -1)"
done
