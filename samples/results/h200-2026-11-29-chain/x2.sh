#!/bin/bash
source .device/setup.sh
nvidia-smi -L
export VAST_CACHE_DIR=/tmp/vc
timeout 170 bash tests/e2e/devices/on_gpus.sh build-gpu/icd/libvast.so .device/e2e_test_devices NVIDIA 2>&1 | tail -30
