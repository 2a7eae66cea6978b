#!/usr/bin/python3
"""test_pyopencl.py: pyopencl's array library and algorithms through VAST, against PoCL.

Someone else's code is the test here: pyopencl generates its kernels (elementwise, reduction,
scan, take/put, clmath, Random123 and RANLUX generators, copy_if, partition, unique, radix
sort) and launches them with its own buffer patterns. Every case runs on PoCL directly and on
VAST's virtual device over the same PoCL device, from the same seeded inputs, with outputs
poisoned first where pyopencl lets the caller pass them; VAST's bytes must equal PoCL's (the
same kernels on the same device), and both must agree with numpy.

The parent runs the cases twice, each time in a child process (VAST reads its configuration
once, at load), with one fresh pyopencl cache folder for both: the first child builds from
source and fills the cache, the second loads every program with clCreateProgramWithBinary from
the binaries VAST handed out (pyopencl's binary cache, as in users' second runs). The parent
fails on any case that differs or raises, and on VAST log lines that mean a wrong or refused
launch (out-of-bounds accesses, "cannot be paged", work-groups larger than the budget).

A configuration may start from the cache another one filled (--cache DIR without --fresh): its
runs then all load binaries.

usage: test_pyopencl.py --icd-dir DIR [--cases a,b,...] [--runs N] [--refusable a,b]
                        [--cache DIR [--fresh]] [--child]
  VAST_DEVICE_MEMORY / VAST_PAGE_SIZE / VAST_FORCE_PAGED from the environment reach VAST.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback



def budget_bytes():
    """The device budget the sizes follow; 4M where every launch is forced onto the paged
    kernel (that configuration keeps the data within its budget: paged kernels, no partitions)."""
    v = os.environ.get("VAST_DEVICE_MEMORY", "4M").strip().upper()
    if os.environ.get("VAST_FORCE_PAGED") == "1":
        v = "4M"
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(v[-1:], 1)
    return int(v.rstrip("KMG")) * scale


# Arrays of int32 1.25 times the device budget (5 MiB at 4M, 320 KiB at 256K), odd, no page
# multiple; a kernel whose work-group shares data through barriers must find its share of
# them within the budget, so sizes follow the budget rather than a fixed count.
N = budget_bytes() * 5 // 16 | 1
N_SMALL = N // 20 | 1   # for the slow cases (RANLUX, radix sort) and whole-array gathers
POISON = 0xAB
SEED = 20261125

# VAST log lines that a correct run never prints.
BAD_LOG = ("out of bounds", "cannot be paged", "alone touches", "needs", "fault log overflow")


def platform_queue(cl, name_part):
    for p in cl.get_platforms():
        if name_part in p.name:
            dev = p.get_devices()[0]
            ctx = cl.Context([dev])
            return ctx, cl.CommandQueue(ctx)
    raise RuntimeError(f"no OpenCL platform named like {name_part!r}")


def poisoned(cla, queue, shape, dtype):
    """An output array whose bytes are POISON: a lost write cannot look like a right one."""
    import numpy as np
    a = cla.empty(queue, shape, dtype)
    a.set(np.full(a.nbytes, POISON, np.uint8).view(dtype).reshape(shape))
    return a


# ---- the cases: each takes (cl, cla, ctx, queue, rng) and returns a dict of numpy arrays ----

def case_arith(cl, cla, ctx, q, rng):
    import numpy as np
    from pyopencl.elementwise import ElementwiseKernel
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    ia = rng.integers(-2**31, 2**31, N, dtype=np.int32)
    ib = rng.integers(1, 2**20, N, dtype=np.int32)
    ga, gb, gia, gib = (cla.to_device(q, x) for x in (a, b, ia, ib))
    axpb = ElementwiseKernel(ctx, "float x, const float *a, const float *b, float *out",
                             "out[i] = x * a[i] + b[i]", "vast_axpb")
    out = poisoned(cla, q, N, np.float32)
    axpb(np.float32(2.5), ga, gb, out)
    iout = poisoned(cla, q, N, np.int32)
    ElementwiseKernel(ctx, "const int *a, const int *b, int *out",
                      "out[i] = (a[i] ^ b[i]) + a[i] % b[i]", "vast_iops")(gia, gib, iout)
    r = {"axpb": out.get(), "iops": iout.get(), "sum": (ga + gb).get(), "prod": (ga * gb).get(),
         "div": (ga / 3).get(), "neg": (-gia).get()}
    assert np.allclose(r["axpb"], np.float32(2.5) * a + b, rtol=1e-5, atol=1e-5)
    assert np.array_equal(r["iops"], (ia ^ ib) + np.fmod(ia, ib))
    return r


def case_reduce(cl, cla, ctx, q, rng):
    import numpy as np
    from pyopencl.reduction import ReductionKernel
    a = rng.integers(-1000, 1000, N, dtype=np.int32)
    f = rng.standard_normal(N).astype(np.float32)
    ga, gf = cla.to_device(q, a), cla.to_device(q, f)
    sumsq = ReductionKernel(ctx, np.int64, neutral="0", reduce_expr="a+b",
                            map_expr="(long)x[i]*x[i]", arguments="const int *x")
    r = {"sum": cla.sum(ga).get(), "max": cla.max(ga).get(), "min": cla.min(ga).get(),
         "dot": cla.dot(gf, gf).get(), "sumsq": sumsq(ga).get()}
    assert r["sum"] == a.sum() and r["max"] == a.max() and r["min"] == a.min()
    assert r["sumsq"] == (a.astype(np.int64) ** 2).sum()
    assert np.isclose(r["dot"], np.dot(f.astype(np.float64), f), rtol=1e-3)
    return r


def case_scan(cl, cla, ctx, q, rng):
    import numpy as np
    from pyopencl.scan import InclusiveScanKernel, ExclusiveScanKernel
    a = rng.integers(-100, 100, N, dtype=np.int32)
    inc = cla.to_device(q, a)
    InclusiveScanKernel(ctx, np.int32, "a+b", "0")(inc)
    exc = cla.to_device(q, a)
    ExclusiveScanKernel(ctx, np.int32, "a+b", "0")(exc)
    r = {"inclusive": inc.get(), "exclusive": exc.get()}
    assert np.array_equal(r["inclusive"], np.cumsum(a, dtype=np.int32))
    assert np.array_equal(r["exclusive"][1:], np.cumsum(a, dtype=np.int32)[:-1])
    return r


def case_fancy(cl, cla, ctx, q, rng):
    import numpy as np
    src = rng.integers(-2**31, 2**31, N, dtype=np.int32)
    idx = rng.permutation(N).astype(np.int32)
    gsrc, gidx = cla.to_device(q, src), cla.to_device(q, idx)
    gathered = poisoned(cla, q, N, np.int32)
    cla.take(gsrc, gidx, out=gathered)
    dest = poisoned(cla, q, N, np.int32)
    dest[gidx] = gsrc
    r = {"take": gathered.get(), "put": dest.get(), "getitem": gsrc[gidx].get()}
    assert np.array_equal(r["take"], src[idx]) and np.array_equal(r["getitem"], src[idx])
    want = np.empty_like(src)
    want[idx] = src
    assert np.array_equal(r["put"], want)
    return r


def case_clmath(cl, cla, ctx, q, rng):
    import numpy as np
    import pyopencl.clmath as clmath
    x = rng.uniform(0.1, 10.0, N).astype(np.float32)
    y = rng.uniform(-5.0, 5.0, N).astype(np.float32)
    gx, gy = cla.to_device(q, x), cla.to_device(q, y)
    r = {"sin": clmath.sin(gx).get(), "exp": clmath.exp(gy).get(), "sqrt": clmath.sqrt(gx).get(),
         "atan2": clmath.atan2(gy, gx).get(), "log": clmath.log(gx).get()}
    assert np.allclose(r["sqrt"], np.sqrt(x), rtol=1e-5)
    assert np.allclose(r["atan2"], np.arctan2(y, x), rtol=1e-4, atol=1e-5)
    return r


def case_random(cl, cla, ctx, q, rng):
    import numpy as np
    import pyopencl.clrandom as clrandom
    r = {"philox": clrandom.PhiloxGenerator(ctx, seed=SEED).uniform(q, N, np.float32).get(),
         "threefry": clrandom.ThreefryGenerator(ctx, seed=SEED).normal(q, N, np.float32).get(),
         "ranlux": clrandom.RanluxGenerator(q, seed=SEED).uniform(q, N_SMALL, np.float32).get()}
    assert 0.45 < r["philox"].mean() < 0.55 and abs(r["threefry"].mean()) < 0.05
    assert 0.4 < r["ranlux"].mean() < 0.6
    return r


def case_complex(cl, cla, ctx, q, rng):
    import numpy as np
    a = (rng.standard_normal(N) + 1j * rng.standard_normal(N)).astype(np.complex64)
    b = (rng.standard_normal(N) + 1j * rng.standard_normal(N)).astype(np.complex64)
    d = (rng.standard_normal(N_SMALL) + 1j * rng.standard_normal(N_SMALL)).astype(np.complex128)
    ga, gb, gd = cla.to_device(q, a), cla.to_device(q, b), cla.to_device(q, d)
    r = {"mul": (ga * gb).get(), "add": (ga + gb).get(), "abs": abs(ga).get(),
         "conj": ga.conj().get(), "dmul": (gd * gd).get(), "sum": cla.sum(gd).get()}
    assert np.allclose(r["mul"], a * b, rtol=1e-4, atol=1e-5)
    assert np.allclose(r["dmul"], d * d)
    return r


def case_algorithm(cl, cla, ctx, q, rng):
    import numpy as np
    from pyopencl.algorithm import copy_if, remove_if, partition, unique, RadixSort
    a = rng.integers(0, 1000, N, dtype=np.int32)
    ga = cla.to_device(q, a)
    kept, count, _ = copy_if(ga, "ary[i] % 3 == 0")
    removed, rcount, _ = remove_if(ga, "ary[i] < 500")
    t, f, pcount, _ = partition(ga, "ary[i] & 1")
    s = np.sort(a)
    uniq, ucount, _ = unique(cla.to_device(q, s))
    keys = rng.integers(0, 2**31, N_SMALL, dtype=np.int32)
    sort = RadixSort(ctx, "int *ary", key_expr="ary[i]", sort_arg_names=["ary"])
    (sorted_keys,), _ = sort(cla.to_device(q, keys), key_bits=31)
    n, nr, npc, nu = (int(c.get()) for c in (count, rcount, pcount, ucount))
    r = {"copy_if": kept[:n].get(), "remove_if": removed[:nr].get(), "part_true": t[:npc].get(),
         "part_false": f[:N - npc].get(), "unique": uniq[:nu].get(), "radix": sorted_keys.get(),
         "subset_max": cla.subset_max(cla.to_device(q, rng.permutation(N_SMALL)[:N_SMALL // 3].astype(np.int32)),
                                      ga[:N_SMALL]).get()}
    assert np.array_equal(r["copy_if"], a[a % 3 == 0]) and np.array_equal(r["remove_if"], a[a >= 500])
    assert np.array_equal(r["part_true"], a[(a & 1) != 0]) and np.array_equal(r["unique"], np.unique(a))
    assert np.array_equal(r["radix"], np.sort(keys))
    return r


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def same_bytes(x, y):
    import numpy as np
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


REFUSAL_CODES = ("EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST", "OUT_OF_RESOURCES")


def child(cases, refusable):
    import numpy as np
    import pyopencl as cl
    import pyopencl.array as cla
    pocl = platform_queue(cl, "Portable")
    vast = platform_queue(cl, "VAST")
    failed = 0
    for name in cases:
        t0 = time.perf_counter()
        try:
            want = CASES[name](cl, cla, *pocl, np.random.default_rng(SEED))
        except Exception:
            failed += 1
            print(f"case {name}: FAIL (on PoCL)\n{traceback.format_exc()}", flush=True)
            continue
        t1 = time.perf_counter()
        try:
            got = CASES[name](cl, cla, *vast, np.random.default_rng(SEED))
            t2 = time.perf_counter()
            bad = [k for k in want if not same_bytes(want[k], got[k])]
            if bad:
                raise AssertionError("VAST differs from PoCL in " + ", ".join(bad))
            print(f"case {name}: PASS ({t1 - t0:.1f} s on PoCL, {t2 - t1:.1f} s through VAST)",
                  flush=True)
        except cl.Error as e:
            # A refusal is an OpenCL error the application sees (never a wrong result): allowed
            # only for the cases the configuration names, where VAST must also say why.
            if name in refusable and any(c in str(e) for c in REFUSAL_CODES):
                print(f"case {name}: REFUSED ({e})", flush=True)
            else:
                failed += 1
                print(f"case {name}: FAIL\n{traceback.format_exc()}", flush=True)
        except Exception:
            failed += 1
            print(f"case {name}: FAIL\n{traceback.format_exc()}", flush=True)
    return 1 if failed else 0


def parent(args):
    cases = args.cases.split(",") if args.cases else list(CASES)
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        print("unknown cases:", ", ".join(unknown))
        return 2
    env = dict(os.environ, OCL_ICD_VENDORS=args.icd_dir, PYOPENCL_NO_CACHE="",
               PYOPENCL_COMPILER_OUTPUT="0", LC_ALL="C")
    env.pop("PYOPENCL_NO_CACHE")
    passed = failed = skipped = 0
    if args.cache and args.fresh:
        shutil.rmtree(args.cache, ignore_errors=True)
    if args.cache:
        os.makedirs(args.cache, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="vast-pyopencl-") as tmp:
        cache = args.cache or tmp
        env["XDG_CACHE_HOME"] = cache
        cached = any(files for _, _, files in os.walk(cache))  # another configuration's
        for run in range(args.runs):
            what = "from source" if run == 0 and not cached else "from pyopencl's binary cache"
            p = subprocess.run([sys.executable, __file__, "--child", "--cases", ",".join(cases),
                                "--refusable", args.refusable],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=args.timeout)
            print(f"--- run {run + 1} ({what}), exit {p.returncode}")
            print(p.stdout)
            lines = p.stdout.splitlines()
            ok = {l.split()[1][:-1] for l in lines if l.startswith("case ") and l.split()[2] == "PASS"}
            refused = {l.split()[1][:-1] for l in lines if l.startswith("case ") and " REFUSED " in l}
            bad_log = [l for l in lines if l.startswith("vast:") and any(b in l for b in BAD_LOG)]
            if bad_log and not refused:
                print(f"run {run + 1}: VAST logged {len(bad_log)} line(s) of a wrong or refused launch")
            if refused and not any(l.startswith("vast: error:") for l in lines):
                print(f"run {run + 1}: a case was refused without a 'vast: error:' line saying why")
                failed += 1
            passed += len(ok)
            skipped += len(refused)
            failed += len(cases) - len(ok) - len(refused) + (1 if (bad_log and not refused) or
                                                            p.returncode not in (0, 1) else 0)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--icd-dir")
    ap.add_argument("--cases", default="")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=800)
    ap.add_argument("--cache", default="",
                    help="pyopencl's cache folder (XDG_CACHE_HOME), kept; default: a new one per run")
    ap.add_argument("--fresh", action="store_true", help="empty --cache first")
    ap.add_argument("--refusable", default="",
                    help="cases that may end in a clean refusal (an OpenCL error and VAST's reason), "
                         "counted as skipped: say why where the test is registered")
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        return child(args.cases.split(","), set(filter(None, args.refusable.split(","))))
    if not args.icd_dir:
        ap.error("--icd-dir is required")
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
