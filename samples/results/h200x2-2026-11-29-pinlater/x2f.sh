#!/bin/bash
# x2e.sh again (the same commands and outputs), with build-gpu's A now also pausing the worker
# from a run's start to its first kernel (not kept: README.md).
exec bash "$(dirname "$0")/x2e.sh" "$@"
