#!/usr/bin/python3
"""randk.py: random kernels (randk_gen.py) directly on PoCL and through VAST, byte for byte.

The parent generates the kernels of a range of seeds, several to a program (each kernel's text
depends on its seed alone), and runs every program in one child process per configuration
(VAST reads its configuration once, at load):
  pocl    directly on PoCL: the reference
  direct  through VAST, no budget (direct mode)
  paged   VAST_FORCE_PAGED=1 (the translated kernel over one page table)
  4K      VAST_DEVICE_MEMORY=128K VAST_PAGE_SIZE=4K  (every kernel's data exceeds it: partitions)
  64K     VAST_DEVICE_MEMORY=1M VAST_PAGE_SIZE=64K
Inputs are seeded from the kernel's seed, outputs poisoned (0xA5); the child hashes every
buffer it reads back after the launch. A VAST run must give PoCL's bytes in every buffer, or be
refused: CL_OUT_OF_RESOURCES from clEnqueueNDRangeKernel or from the launch (its event, the
next clFinish), with a "vast: error:" line naming the kernel; refused launches are counted by
reason (the log line with its numbers elided). Anything else fails the run: different bytes, a
crash, a hang, another error, a refusal without its log line, a "vast: error:" line beside a
launch that succeeded. On a failure the parent prints the seed and the configuration and
writes the kernel's program (randk_<seed>.cl) to --keep (default: the current folder).

usage: randk.py --icd-dir DIR [--seeds FIRST:LAST | --seeds S,S,...] [--per-program N]
                [--configs pocl,direct,paged,4K,64K] [--keep DIR] [--timeout S] [--verbose] [--flip]
  --flip flips one bit of the "out" buffer VAST's runs read back: every kernel VAST runs must
  then fail (the comparison can fail).
  Replay one kernel: randk.py --icd-dir DIR --seeds 1234 --per-program 1 --dump DIR writes every
  configuration's buffers to DIR/<config>.<seed>.<buffer> as well.
Exit status: 0 when no run failed (refusals are not failures), 1 otherwise.
"""
import argparse
import hashlib
import json
import os
import re
import select
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import randk_gen  # noqa: E402

CONFIGS = {
    "pocl": {},
    "direct": {},
    "paged": {"VAST_FORCE_PAGED": "1"},
    "4K": {"VAST_DEVICE_MEMORY": "128K", "VAST_PAGE_SIZE": "4K"},
    "64K": {"VAST_DEVICE_MEMORY": "1M", "VAST_PAGE_SIZE": "64K"},
}
POISON = 0xA5
CL_OUT_OF_RESOURCES = -5
CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST = -14


# ---------------------------------------------------------------- child

def inputs(k, np):
    """The initial contents of k's buffers (numpy uint8 arrays by argument name)."""
    rng = np.random.default_rng(k.seed)
    out = {}
    for name, esz, count, role in k.args:
        nbytes = esz * count
        if role in ("in", "inout"):
            out[name] = rng.integers(0, 256, nbytes, dtype=np.uint8)
        elif role == "perm":
            idx = np.arange(count, dtype=np.uint32)
            for lo in range(0, count, k.perm_block):
                hi = min(count, lo + k.perm_block)
                idx[lo:hi] = idx[lo:hi][rng.permutation(hi - lo)]
            out[name] = idx.view(np.uint8)
        elif role == "out":
            out[name] = np.full(nbytes, POISON, dtype=np.uint8)
    return out


class StderrTap:
    """fd 2 redirected to a file, so that VAST's log lines of each launch can be read."""

    def __init__(self):
        self.f = tempfile.TemporaryFile(mode="w+b")
        self.saved = os.dup(2)
        os.dup2(self.f.fileno(), 2)
        self.pos = 0
        self.warnings = []

    def take(self):
        """What was written since the last call; VAST's warnings are kept (the translator's
        are written when a program is built, before its kernels run)."""
        sys.stderr.flush()
        self.f.seek(self.pos)
        data = self.f.read()
        self.pos += len(data)
        os.write(self.saved, data)  # still shown to whoever reads the child's stderr
        text = data.decode("utf-8", "replace")
        self.warnings += [ln for ln in text.splitlines() if ln.startswith("vast: warn")]
        return text


def child(args):
    os.environ["PYOPENCL_NO_CACHE"] = "1"
    os.environ["PYOPENCL_COMPILER_OUTPUT"] = "0"
    import numpy as np
    import pyopencl as cl
    plan = json.load(open(os.path.join(args.work, "plan.json")))
    tap = StderrTap()
    want = "Portable" if args.child == "pocl" else "VAST"
    plat = next((p for p in cl.get_platforms() if p.name.startswith(want)), None)
    if plat is None:
        print(f"FATAL no platform {want}*", flush=True)
        return 3
    dev = plat.get_devices()[0]
    ctx = cl.Context([dev])
    started = args.start is None
    for prog in plan:
        seeds = prog["seeds"]
        if not started:
            if args.start not in seeds:
                continue
            seeds = seeds[seeds.index(args.start):]
            started = True
        kernels = {s: randk_gen.gen_kernel(s) for s in prog["seeds"]}
        src = randk_gen.program([kernels[s] for s in prog["seeds"]])
        print(f"BEGIN {seeds[0]} build", flush=True)
        tap.warnings = []
        try:
            program = cl.Program(ctx, src).build()
        except cl.Error as e:
            for s in seeds:
                print(f"RES {s} buildfail {json.dumps(str(e)[:300])}", flush=True)
            continue
        q = cl.CommandQueue(ctx)
        for s in seeds:
            k = kernels[s]
            print(f"BEGIN {s}", flush=True)
            init = inputs(k, np)
            bufs, kargs = {}, []
            for name, esz, count, role in k.args:
                if role == "scalar":
                    kargs.append(np.uint32(count))
                elif role == "local":
                    kargs.append(cl.LocalMemory(esz * count))
                else:
                    bufs[name] = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=init[name])
                    kargs.append(bufs[name])
            status, detail = "ok", ""
            try:
                kern = getattr(program, k.name)
                kern.set_args(*kargs)
                cl.enqueue_nd_range_kernel(q, kern, (k.glob,), (k.loc,))
            except cl.Error as e:
                status, detail = ("refused_enqueue" if e.code == CL_OUT_OF_RESOURCES else "error"), str(e)[:300]
            if status == "ok":
                try:
                    q.finish()
                except cl.Error as e:
                    status = "refused_run" if e.code == CL_OUT_OF_RESOURCES else "error"
                    detail = str(e)[:300]
            hashes = {}
            for name, b in bufs.items():
                host = np.empty(b.size, dtype=np.uint8)
                try:
                    cl.enqueue_copy(q, host, b)
                    q.finish()
                except cl.Error as e:
                    if status == "ok":
                        status, detail = ("refused_run" if e.code in (CL_OUT_OF_RESOURCES,
                                          CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) else "error"), str(e)[:300]
                    try:
                        cl.enqueue_copy(q, host, b)
                        q.finish()
                    except cl.Error as e2:
                        status, detail = "error", f"read of {name} after the launch failed: {e2}"[:300]
                        break
                if args.flip and args.child != "pocl" and name == "out":
                    host[0] ^= 1  # --flip: the comparison must catch this
                hashes[name] = hashlib.sha256(host.tobytes()).hexdigest()[:16]
                if args.dump:
                    host.tofile(os.path.join(args.dump, f"{args.child}.{s}.{name}"))
                if status.startswith("refused") and name in init and not np.array_equal(host, init[name]):
                    detail += f" [refused launch changed {name}]"
            log = [ln for ln in tap.take().splitlines() if ln.startswith("vast: error:")]
            warn = [ln for ln in tap.warnings if f"'{k.name}'" in ln]
            for b in bufs.values():
                b.release()
            print(f"RES {s} {status} " + json.dumps({"hashes": hashes, "detail": detail, "log": log[:4],
                                                             "warn": warn[:2]}),
                  flush=True)
    print("END", flush=True)
    tap.take()
    os.dup2(tap.saved, 2)  # what VAST prints at exit (VAST_STATS) goes to the real stderr
    return 0


# ---------------------------------------------------------------- parent

def parse_seeds(text):
    if ":" in text:
        a, b = text.split(":")
        return list(range(int(a), int(b)))
    return [int(s) for s in text.split(",") if s]


def run_config(args, cfg, seeds_all, work, env_base):
    """Runs every program in children of configuration cfg (restarting after a crash or a
    hang at the next kernel); returns {seed: (status, info)}."""
    env = dict(env_base)
    env.update(CONFIGS[cfg])
    res = {}
    start = None
    while True:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", cfg, "--work", work]
        if start is not None:
            cmd += ["--start", str(start)]
        if args.dump:
            cmd += ["--dump", args.dump]
        if args.flip:
            cmd += ["--flip"]
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        current, buf, errbuf, ended = None, b"", b"", False
        deadline = time.time() + args.timeout
        fds = [p.stdout, p.stderr]
        while fds:
            left = deadline - time.time()
            if left <= 0:
                p.kill()  # our own child
                p.wait()
                break
            ready, _, _ = select.select(fds, [], [], left)
            for f in ready:
                chunk = os.read(f.fileno(), 65536)
                if not chunk:
                    fds.remove(f)
                    continue
                if f is p.stderr:
                    errbuf = (errbuf + chunk)[-20000:]
                    continue
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    line = line.decode()
                    if args.verbose:
                        print(f"  [{cfg}] {line[:200]}")
                    if line.startswith("BEGIN "):
                        current = int(line.split()[1])
                        deadline = time.time() + args.timeout
                    elif line.startswith("RES "):
                        _, s, status, info = line.split(" ", 3)
                        res[int(s)] = (status, json.loads(info) if info.startswith("{") else {"detail": info})
                        current = None
                    elif line == "END":
                        ended = True
        rc = p.wait()
        if ended and rc == 0:
            return res
        if current is None:
            print(f"FAIL config {cfg}: child exited {rc} outside a kernel\n{errbuf.decode('utf-8', 'replace')[-3000:]}")
            for s in seeds_all:
                res.setdefault(s, ("error", {"detail": f"child exited {rc}"}))
            return res
        what = "hang" if rc in (-9,) else f"crash (status {rc})"
        res[current] = (what.split()[0], {"detail": what + ": " + errbuf.decode("utf-8", "replace")[-1500:]})
        later = [s for s in seeds_all if s > current]
        if not later:
            return res
        start = later[0]


def refusal_reason(log, warn, kname):
    for ln in log:
        if kname in ln:
            if "translator rejected" in ln and warn:
                ln = warn[0].split("(input.cl")[0] + " " + warn[0].split("):", 1)[-1]
            r = ln.split(":", 2)[-1]
            r = re.sub(r"'k\d+'", "K", r)
            r = re.sub(r"\d+(\.\d+)?", "N", r)
            r = r.split("cannot be paged:")[-1] if "cannot be paged:" in r else r
            return r.strip()[:120]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--icd-dir")
    ap.add_argument("--seeds", default="1:41")
    ap.add_argument("--per-program", type=int, default=10)
    ap.add_argument("--configs", default="pocl,direct,paged,4K,64K")
    ap.add_argument("--keep", default=".")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--dump")
    ap.add_argument("--flip", action="store_true")
    ap.add_argument("--child")
    ap.add_argument("--work")
    ap.add_argument("--start", type=int)
    args = ap.parse_args()
    if args.child:
        return child(args)
    seeds = parse_seeds(args.seeds)
    configs = args.configs.split(",")
    if configs[0] != "pocl":
        configs.insert(0, "pocl")
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="randk") as work:
        plan = [{"seeds": seeds[i:i + args.per_program]} for i in range(0, len(seeds), args.per_program)]
        json.dump(plan, open(os.path.join(work, "plan.json"), "w"))
        env = dict(os.environ)
        if args.icd_dir:
            env["OCL_ICD_VENDORS"] = args.icd_dir
        env.setdefault("POCL_CACHE_DIR", os.path.join(work, "pocl-cache"))
        env["PYOPENCL_NO_CACHE"] = "1"
        env["PYOPENCL_COMPILER_OUTPUT"] = "0"
        results = {}
        for cfg in configs:
            t = time.time()
            results[cfg] = run_config(args, cfg, seeds, work, env)
            print(f"config {cfg}: {len(results[cfg])} kernels in {time.time() - t:.1f} s", flush=True)
    ref = results["pocl"]
    failures, refusals, ran, partial = [], {}, {c: 0 for c in configs}, {}
    for s in seeds:
        rs, ri = ref.get(s, ("missing", {}))
        if rs != "ok":
            failures.append((s, "pocl", f"the reference run did not succeed: {rs} {ri.get('detail', '')}"))
            continue
        for cfg in configs[1:]:
            st, info = results[cfg].get(s, ("missing", {}))
            if st == "ok":
                diff = [b for b in ri["hashes"] if info["hashes"].get(b) != ri["hashes"][b]]
                if diff:
                    failures.append((s, cfg, f"differs from PoCL in {', '.join(diff)}"))
                elif info.get("log"):
                    failures.append((s, cfg, f"succeeded with error lines: {info['log']}"))
                else:
                    ran[cfg] += 1
            elif st.startswith("refused"):
                why = refusal_reason(info.get("log", []), info.get("warn", []), f"k{s}")
                if why is None:
                    failures.append((s, cfg, f"{st} without a log line naming the kernel: {info.get('detail')}"))
                else:
                    key = (cfg, st, why)
                    refusals[key] = refusals.get(key, 0) + 1
                    if "changed" in info.get("detail", ""):
                        partial.setdefault(cfg, []).append(s)
            else:
                failures.append((s, cfg, f"{st}: {info.get('detail', '')}"))
    print(f"randk: {len(seeds)} kernels, {time.time() - t0:.0f} s")
    for cfg in configs[1:]:
        nref = sum(v for (c, _, _), v in refusals.items() if c == cfg)
        print(f"  {cfg}: {ran[cfg]} equal to PoCL, {nref} refused")
    for (cfg, st, why), v in sorted(refusals.items(), key=lambda kv: (kv[0][0], -kv[1])):
        print(f"  refused {cfg} {st} x{v}: {why}")
    for cfg, ss in partial.items():
        print(f"  note {cfg}: {len(ss)} launches refused while they ran left some buffers partly written "
              f"(seeds {','.join(map(str, ss[:10]))}): earlier partitions' results stay")
    for s, cfg, why in failures:
        path = os.path.join(args.keep, f"randk_{s}.cl")
        with open(path, "w") as f:
            f.write(randk_gen.program([randk_gen.gen_kernel(s)]))
        print(f"FAIL seed {s} config {cfg}: {why[:2000]} (kernel k{s} in {path})")
    print(f"randk: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
