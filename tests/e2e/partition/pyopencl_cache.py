#!/usr/bin/env python3
"""pyopencl_cache.py - programs from pyopencl's binary cache through VAST (issue 13, defect 5).

pyopencl keeps the binaries of the programs it builds (CL_PROGRAM_BINARIES) in a cache folder
and, on its next run, loads them with clCreateProgramWithBinary. Each step runs on PoCL and on
VAST in one process (OCL_ICD_VENDORS names a folder with both icds) and compares the bytes:

  axpb     y = (a*x + b) >> SHIFT over 2 x 8 MiB of uint32 (-D SHIFT=3) at VAST_DEVICE_MEMORY=4M:
           the launch is partitioned; from the cache it must page too (VAST_STATS)
  clmath   pyopencl.clmath functions and array arithmetic over arrays that fit a 256K budget
           (many kernels and arrays: the page cache's frames end up scattered)

Usage: pyopencl_cache.py --budget 4M|256K  (one process; run_cache.sh runs it twice per budget
with one fresh cache folder, so that the second run loads every program from binaries).
Exit 0 when every result equals PoCL's, 1 otherwise, 77 when pyopencl is missing.
"""
import os
import sys

try:
    import numpy as np
    import pyopencl as cl
    import pyopencl.array as cla
    import pyopencl.clmath as clmath
except ImportError as e:  # pragma: no cover
    print("skip: %s" % e)
    sys.exit(77)

AXPB = """
__kernel void axpb(__global const uint *x, __global uint *y, uint a, uint b) {
  size_t i = get_global_id(0);
  y[i] = (a * x[i] + b) >> SHIFT;
}
"""
AX_GLOBAL = 2 << 20
AX_N = AX_GLOBAL + 13


def platform(prefix):
    for p in cl.get_platforms():
        if p.name.startswith(prefix):
            return p
    sys.exit("no platform named %s* (OCL_ICD_VENDORS=%s)" % (prefix, os.environ.get("OCL_ICD_VENDORS")))


def queue(prefix):
    ctx = cl.Context(devices=platform(prefix).get_devices()[:1])
    return ctx, cl.CommandQueue(ctx)


def axpb(ctx, q, x):
    prg = cl.Program(ctx, AXPB).build(options=["-D", "SHIFT=3"])
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    y = np.full(AX_N, 0xA5A5A5A5, dtype=np.uint32)
    yb = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
    prg.axpb(q, (AX_GLOBAL,), (64,), xb, yb, np.uint32(2654435761), np.uint32(12345))
    cl.enqueue_copy(q, y, yb)
    q.finish()
    return y


def clmath_steps(ctx, q, data):
    out = []
    a = cla.to_device(q, data)
    b = cla.to_device(q, data[::-1].copy())
    for f in (clmath.sin, clmath.cos, clmath.exp, clmath.sqrt, clmath.log, clmath.tanh, clmath.atan):
        out.append(f(a if f is not clmath.log and f is not clmath.sqrt else abs(a) + 1).get())
    out.append((a * 3 + b).get())
    out.append((a * b - 2).get())
    out.append(clmath.atan2(a, b).get())
    return out


def main():
    budget = sys.argv[sys.argv.index("--budget") + 1] if "--budget" in sys.argv else "4M"
    rng = np.random.default_rng(20261125)
    bad = 0
    results = {}
    for prefix in ("Portable", "VAST"):
        ctx, q = queue(prefix)
        if budget == "4M":
            x = rng.integers(0, 2**32, AX_N, dtype=np.uint32) if prefix == "Portable" else results["x"]
            results["x"] = x
            results[prefix] = [axpb(ctx, q, x)]
        else:
            d = (rng.random(20011, dtype=np.float32) * 4 - 2) if prefix == "Portable" else results["d"]
            results["d"] = d
            results[prefix] = clmath_steps(ctx, q, d)
    for i, (want, got) in enumerate(zip(results["Portable"], results["VAST"])):
        if want.tobytes() != got.tobytes():
            diff = np.flatnonzero(want.view(np.uint8) != got.view(np.uint8))
            print("step %d: VAST differs from PoCL at byte %d of %d" % (i, diff[0], want.nbytes))
            bad += 1
    if budget == "4M":
        want = ((results["x"].astype(np.uint64) * 2654435761 + 12345) & 0xFFFFFFFF) >> 3
        if not np.array_equal(results["Portable"][0][:AX_GLOBAL], want[:AX_GLOBAL].astype(np.uint32)):
            print("PoCL's axpb differs from numpy")
            bad += 1
    print("%s: %d step(s) differ" % ("FAIL" if bad else "ok", bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
