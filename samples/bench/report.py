#!/usr/bin/env python3
"""samples/bench/report.py: the harness's report step (issues 7, 17); python3 standard library only.

Reads the raw rows that samples/bench/run.sh appended (one or more result folders or raw.csv
files; for the same sample, size, configuration, cache mode, repeat and warm-up flag the last row
read wins), leaves the warm-up rows out, and writes
  results.csv  one row per case (sample and size), cache mode and configuration: the raw columns
               of its median run plus runs, passed, median_s, min_s, max_s and the derived
               columns below,
  results.md   date, host, device, driver, the sizes, the table (median and min-max spread per
               case, cache mode and configuration; geometric means per configuration), the
               goals of issue 17 with their verdicts (last), the exact commands,
  results.png  median time normalised to native per sample and configuration (log scale), one
               panel set per cache mode, drawn with gnuplot when it is installed,
  sweep.png    median seconds per GB of data against the data size, one line per sample and
               configuration (warm caches first, else the first cache mode), when a sample ran
               at several sizes.
and prints the goals table last.

Every ratio is taken between medians of the same run: same case, same cache mode.
  ref_config      the reference: native when it passed, else cpu
  hash_equal      yes/no: every passing repeat's hash against the reference's (ref on the
                  reference itself)
  speedup_vs_cpu  cpu median / this median
  infgpu          native median / this median: the fraction of the in-core GPU reached
  vs_expert       expert median / this median
  bound_bytes     in_bytes + out_bytes: what must cross the bus at least
  bound_s         bound_bytes / (pcie_gbs * 1e9), one direction at a time
  pcie_fraction   bound_s / this median (not for cpu rows)
  time_vs_native  this median / native median (what results.png shows)

usage: report.py [--out DIR] [--pcie-gbs R] [--pcie-both-gbs R] [--overhead FILE] SOURCE...
  SOURCE          a folder written by run.sh (raw.csv, meta.txt, commands.txt) or a raw CSV file
  --out           where to write (default: the first SOURCE folder)
  --pcie-gbs      pinned PCIe rate in GB/s, one direction (default: meta.txt's, else 54.9)
  --pcie-both-gbs both directions at once (default 1.6 x --pcie-gbs, FACTS.md: 88 on the H100)
  --overhead      overhead.md of tests/bench/overhead.sh (default: SOURCE/overhead.md when there)
"""
import argparse
import collections
import csv
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

CONFIG_ORDER = ["native", "vast-direct", "vast-paged", "vast-2x", "vast-4x", "expert", "cpu"]
CACHE_ORDER = ["warm", "vastwarm", "cold", "-"]
DEFAULT_PCIE_GBS = 54.9
BOTH_DIRECTIONS = 1.6  # both directions at once reach ~1.6x one (FACTS.md)


def read_sources(sources):
    rows, metas, commands = {}, [], []
    for src in sources:
        folder = src if os.path.isdir(src) else os.path.dirname(os.path.abspath(src))
        raw = os.path.join(src, "raw.csv") if os.path.isdir(src) else src
        if not os.path.isfile(raw):
            sys.exit(f"report: no raw CSV at {raw}")
        with open(raw, newline="") as f:
            for r in csv.DictReader(f):
                r["_folder"] = folder
                # Rows of the harness before repeats: one warm run each.
                r.setdefault("size_args", r["args"].replace(" --partitioned", "").split(" --chunk")[0])
                r["size_args"] = r["size_args"] or r["args"]
                r["cache"] = r.get("cache") or "-"
                r["repeat"] = r.get("repeat") or "1"
                r["warmup"] = r.get("warmup") or "no"
                key = (r["sample"], r["size_args"], r["config"], r["cache"], r["repeat"], r["warmup"])
                rows[key] = r
        meta = {}
        mpath = os.path.join(folder, "meta.txt")
        if os.path.isfile(mpath):
            with open(mpath) as f:
                for line in f:
                    if ": " in line:
                        k, v = line.rstrip("\n").split(": ", 1)
                        meta[k] = v
        meta["_folder"] = folder
        metas.append(meta)
        cpath = os.path.join(folder, "commands.txt")
        if os.path.isfile(cpath):
            with open(cpath) as f:
                commands.extend(line.rstrip("\n") for line in f if line.startswith("# "))
    return list(rows.values()), metas, commands


def num(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def parse_size(text):
    """A sample's size argument: 1000003, 16M (10^6), 8Mi (2^20), 1Gi ..."""
    m = re.fullmatch(r"([0-9]+)(k|M|G|Ki|Mi|Gi)?", text or "")
    if not m:
        return None
    scale = {None: 1, "k": 1e3, "M": 1e6, "G": 1e9, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}[m.group(2)]
    return int(m.group(1)) * scale


def arg_value(args, *names):
    words = args.split()
    for i, w in enumerate(words[:-1]):
        if w in names:
            return parse_size(words[i + 1])
    return None


def aggregate(rows):
    """Timed rows grouped by (sample, size_args) -> cache -> config -> aggregate dict."""
    groups = {}
    for r in rows:
        if r["warmup"] == "yes":
            continue
        groups.setdefault((r["sample"], r["size_args"]), {}).setdefault(r["cache"], {}) \
              .setdefault(r["config"], []).append(r)
    cases = {}
    for case, by_cache in groups.items():
        for cache, by_config in by_cache.items():
            for config, rs in by_config.items():
                rs.sort(key=lambda r: int(r["repeat"]) if r["repeat"].isdigit() else 0)
                passed = [r for r in rs if r["status"] == "PASS" and num(r["time_s"]) is not None]
                times = sorted(num(r["time_s"]) for r in passed)
                if passed:
                    med = statistics.median(times)
                    rep = min(passed, key=lambda r: abs(num(r["time_s"]) - med))
                else:
                    med, rep = None, rs[-1]
                a = collections.defaultdict(str, rep)  # older raw files lack some columns
                a["runs"] = str(len(rs))
                a["passed"] = str(len(passed))
                a["median_s"] = "%.6f" % med if med is not None else ""
                a["min_s"] = "%.6f" % times[0] if times else ""
                a["max_s"] = "%.6f" % times[-1] if times else ""
                if passed and len(passed) == len(rs):
                    a["status"] = "PASS"
                elif passed:
                    bad = next(r for r in rs if r["status"] != "PASS")
                    a["status"] = "MIXED"
                    a["reason"] = f"{len(rs) - len(passed)} of {len(rs)} runs {bad['status']}: {bad['reason']}"
                hashes = {r["hash"] for r in passed}
                a["_hashes"] = hashes
                cases.setdefault(case, {}).setdefault(cache, {})[config] = a
    return cases


def derive(cases, pcie_gbs):
    for case, by_cache in cases.items():
        for cache, cfgs in by_cache.items():
            def med(c):
                return num(cfgs[c]["median_s"]) if c in cfgs else None
            native_t, cpu_t, expert_t = med("native"), med("cpu"), med("expert")
            ref = "native" if native_t else "cpu" if cpu_t else ""
            # Without a reference in this cache mode, another mode's hash still checks the bits.
            ref_hashes = cfgs[ref]["_hashes"] if ref else set()
            if not ref_hashes:
                for other in by_cache.values():
                    for c in ("native", "cpu"):
                        if c in other and other[c]["_hashes"] and not ref_hashes:
                            ref_hashes = other[c]["_hashes"]
            for c, r in cfgs.items():
                t = num(r["median_s"])
                r["ref_config"] = ref
                if not r["_hashes"] or not ref_hashes:
                    r["hash_equal"] = "-"
                elif c == ref:
                    r["hash_equal"] = "ref" if len(r["_hashes"]) == 1 else "no"
                else:
                    r["hash_equal"] = "yes" if r["_hashes"] == ref_hashes and len(ref_hashes) == 1 else "no"
                inb, outb = num(r["in_bytes"]), num(r["out_bytes"])
                bound = (inb or 0) + (outb or 0) if inb is not None or outb is not None else None
                r["bound_bytes"] = "%.0f" % bound if bound is not None else ""
                bound_s = bound / (pcie_gbs * 1e9) if bound is not None else None
                r["bound_s"] = "%.6f" % bound_s if bound_s is not None else ""
                r["speedup_vs_cpu"] = "%.4f" % (cpu_t / t) if t and cpu_t else ""
                r["infgpu"] = "%.4f" % (native_t / t) if t and native_t else ""
                r["vs_expert"] = "%.4f" % (expert_t / t) if t and expert_t and c != "expert" else ""
                r["pcie_fraction"] = "%.4f" % (bound_s / t) if t and bound_s and c != "cpu" else ""
                r["time_vs_native"] = "%.4f" % (t / native_t) if t and native_t else ""


def geomean(values):
    values = [v for v in values if v and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def human_bytes(text):
    v = num(text)
    if v is None:
        return "-"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= scale:
            return "%.2f %s" % (v / scale, unit)
    return "%.0f B" % v


def fmt(text, pattern="%.3g", suffix=""):
    v = num(text)
    return (pattern % v) + suffix if v is not None else "-"


def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def cache_key(c):
    return CACHE_ORDER.index(c) if c in CACHE_ORDER else 99


def config_key(c):
    return CONFIG_ORDER.index(c) if c in CONFIG_ORDER else 99


def ordered(cases):
    for case in cases:  # first-seen order, as the preset lists them
        for cache in sorted(cases[case], key=cache_key):
            cfgs = cases[case][cache]
            for c in sorted(cfgs, key=config_key):
                yield case, cache, c, cfgs[c]


def case_label(case, cases):
    sample, size = case
    multi = sum(1 for s, _ in cases if s == sample) > 1
    return f"{sample} {size}" if multi else sample


DERIVED = ("runs", "passed", "median_s", "min_s", "max_s", "ref_config", "hash_equal", "speedup_vs_cpu",
           "infgpu", "vs_expert", "bound_bytes", "bound_s", "pcie_fraction", "time_vs_native")


def write_csv(path, rows_in_order):
    rows = [r for _, _, _, r in rows_in_order]
    fields = [k for k in rows[0] if not k.startswith("_") and k not in DERIVED]
    fields += list(DERIVED)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


# ---- the goals of issue 17 -------------------------------------------------------------------

def verdict(value, target, higher_is_better=True):
    if value is None:
        return "not measured"
    ok = value >= target if higher_is_better else value <= target
    return "met" if ok else "not met"


def ratio_per_case(cases, cache, num_config, den_config, samples=None):
    """{label: median(num_config) / median(den_config)} over cases run in `cache` mode."""
    out = {}
    for case, by_cache in cases.items():
        if samples and case[0] not in samples:
            continue
        cfgs = by_cache.get(cache, {})
        a = num(cfgs.get(num_config, {}).get("median_s"))
        b = num(cfgs.get(den_config, {}).get("median_s"))
        if a and b:
            out[case_label(case, cases)] = a / b
    return out


def matrixmul_flops(size_args):
    n = arg_value(size_args, "-n", "--size")
    m = arg_value(size_args, "--rows") or n
    return 2.0 * m * n * n if n else None


def overhead_ratio(path):
    """ICD / direct of the empty launch from overhead.sh's table, with the two times."""
    if not path or not os.path.isfile(path):
        return None
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells and cells[0] == "clEnqueueNDRangeKernel_empty_us" and len(cells) >= 3:
                direct, icd = num(cells[1]), num(cells[2])
                if direct and icd:
                    return icd / direct, direct, icd
    return None


def goals(cases, metas, pcie_gbs, pcie_both_gbs, overhead_path):
    """[(goal, measured, target, verdict, detail)]"""
    out = []

    def per_sample(d):
        return ", ".join(f"{k} {v:.2f}" for k, v in d.items())

    for cache, target, text in (("warm", 0.95, "forced paged >= 0.95 of native, warm caches"),
                                ("vastwarm", 0.90, "forced paged >= 0.9 of native cold, VAST's cache warm")):
        d = ratio_per_case(cases, cache, "native", "vast-paged")
        g = geomean(list(d.values()))
        worst = min(d.values()) if d else None
        v = verdict(g, target)
        if v == "met" and worst is not None and worst < target:
            v = "met (geomean; not every sample)"
        out.append((text, "geomean %.3f" % g if g else "-", ">= %.2f" % target, v,
                    per_sample(d) if d else f"no native and vast-paged rows with --caches {cache}"))
    for sample in ("MatrixMul", "saxpy"):
        cache = "warm"
        d = ratio_per_case(cases, cache, "expert", "vast-4x", {sample})
        if not d:
            cache = next((c for case, bc in cases.items() if case[0] == sample for c in bc
                          if num(bc[c].get("vast-4x", {}).get("median_s"))
                          and num(bc[c].get("expert", {}).get("median_s"))), None)
            d = ratio_per_case(cases, cache, "expert", "vast-4x", {sample}) if cache else {}
        g = min(d.values()) if d else None
        out.append((f"{sample}: vast-4x >= 0.9 of expert (first launch included)",
                    "%.3f" % g if g is not None else "-", ">= 0.90", verdict(g, 0.90),
                    (per_sample(d) + f" ({cache} caches; worst size counts)") if d else "no expert and vast-4x rows"))

    # Real oversubscription: data above the device's memory, default budget (vast-direct).
    dev_mem = next((num(m.get("device_memory")) for m in metas if num(m.get("device_memory"))), None)
    best_in_core, over = None, []
    for case, by_cache in cases.items():
        if case[0] != "MatrixMul":
            continue
        for cache, cfgs in by_cache.items():
            flops = matrixmul_flops(case[1])
            for c in ("native",):
                t = num(cfgs.get(c, {}).get("median_s"))
                if t and flops and cache == "warm":
                    rate = flops / t
                    best_in_core = max(best_in_core or 0, rate)
            t = num(cfgs.get("vast-direct", {}).get("median_s"))
            data = num(cfgs.get("vast-direct", {}).get("data_bytes"))
            if t and flops and dev_mem and data and data > dev_mem and cache == "warm":
                over.append((case, flops / t))
    if over and best_in_core:
        worst = min(r for _, r in over) / best_in_core
        out.append(("MatrixMul above the device's memory >= 0.9 of in-core (GFLOP/s)", "%.3f" % worst, ">= 0.90",
                    verdict(worst, 0.90), ", ".join(f"{c[1]}: {r / best_in_core:.2f}" for c, r in over)
                    + f" (in-core: best native {best_in_core * 1e-9:.0f} GFLOP/s)"))
    else:
        out.append(("MatrixMul above the device's memory >= 0.9 of in-core (GFLOP/s)", "-", ">= 0.90",
                    "not measured", "needs MatrixMul with data over device_memory (--sweep) and a native run"))
    stream = []
    for case, by_cache in cases.items():
        if case[0] != "saxpy":
            continue
        r = by_cache.get("warm", {}).get("vast-direct", {})
        t, data = num(r.get("median_s")), num(r.get("data_bytes"))
        if t and dev_mem and data and data > dev_mem:
            its = arg_value(case[1], "--iterations") or 1
            moved = ((num(r.get("in_bytes")) or 0) + (num(r.get("out_bytes")) or 0)) * its
            stream.append((case, moved / (pcie_both_gbs * 1e9) / t))
    if stream:
        worst = min(v for _, v in stream)
        out.append(("saxpy above the device's memory >= 0.85 of the both-directions PCIe bound", "%.3f" % worst,
                    ">= 0.85", verdict(worst, 0.85),
                    ", ".join(f"{c[1]}: {v:.2f}" for c, v in stream)
                    + f" (x, y in and y out per iteration at {pcie_both_gbs:g} GB/s)"))
    else:
        out.append(("saxpy above the device's memory >= 0.85 of the both-directions PCIe bound", "-", ">= 0.85",
                    "not measured", "needs saxpy with data over device_memory (--sweep)"))
    ov = overhead_ratio(overhead_path)
    if ov:
        out.append(("empty launch <= 1.5x native", "%.2fx" % ov[0], "<= 1.50x", verdict(ov[0], 1.5, False),
                    f"{ov[2]:.1f} us through VAST, {ov[1]:.1f} us directly (overhead.md)"))
    else:
        out.append(("empty launch <= 1.5x native", "-", "<= 1.50x", "not measured",
                    "no overhead.md (tests/bench/overhead.sh; gpu_report.sh writes it)"))
    d = ratio_per_case(cases, "warm", "native", "vast-direct")
    worst = min(d.values()) if d else None
    slow = [k for k, v in d.items() if v < 1.0]
    out.append(("every sample in direct mode at least as fast as native (warm)",
                "worst %.3f" % worst if worst is not None else "-", ">= 1.00", verdict(worst, 1.0),
                ("slower: " + ", ".join(f"{k} {d[k]:.2f}" for k in slow)) if slow else
                (per_sample(d) if d else "no native and vast-direct rows with warm caches")))
    return out


def goals_md(gs):
    lines = ["| goal | measured | target | verdict | detail |", "|---|---|---|---|---|"]
    for g in gs:
        lines.append("| " + " | ".join(md_cell(x) for x in g) + " |")
    return lines


# ---- results.md ------------------------------------------------------------------------------

def write_md(path, cases, metas, commands, pcie_gbs, notes, gs):
    out = ["# VAST benchmark results", ""]
    for key in ("date", "host", "cpu", "platform", "device", "driver", "device_memory", "max_alloc",
                "cpu_platform", "libvast", "preset", "repeats", "caches", "host_max", "vast_env"):
        vals = sorted({m.get(key, "") for m in metas if m.get(key)})
        if vals:
            out.append(f"- {key}: {'; '.join(vals)}")
    out.append(f"- PCIe rate for the bound: {pcie_gbs:g} GB/s (pinned, FACTS.md)")
    orders = [v for m in metas for k, v in sorted(m.items()) if k.startswith("order")]
    if orders:
        out.append("- order: " + "; ".join(orders))
    out.append("")

    out += ["## Sizes", "",
            "| sample | args | data | in (min.) | out (min.) | PCIe bound s |", "|---|---|---|---|---|---|"]
    for case, by_cache in cases.items():
        r = next(iter(next(iter(by_cache.values())).values()))
        out.append(f"| {case[0]} | `{md_cell(case[1])}` | {human_bytes(r['data_bytes'])} | {human_bytes(r['in_bytes'])} "
                   f"| {human_bytes(r['out_bytes'])} | {fmt(r['bound_s'], '%.4f')} |")
    out.append("")

    out += ["## Results", "",
            "| sample | config | cache | status | median s | min-max s | runs | hash = ref | vs CPU | InfGPU "
            "| vs expert | PCIe bound | h2d | d2h | mode | partitions | faults | budget | reason |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for case, cache, c, r in ordered(cases):
        spread = f"{fmt(r['min_s'], '%.4g')}-{fmt(r['max_s'], '%.4g')}" if r["min_s"] else "-"
        out.append("| " + " | ".join(md_cell(x) for x in (
            case_label(case, cases), c, cache, r["status"], fmt(r["median_s"], "%.4g"), spread,
            f"{r['passed']}/{r['runs']}", r["hash_equal"],
            fmt(r["speedup_vs_cpu"], "%.2f", "x"), fmt(r["infgpu"], "%.2f"), fmt(r["vs_expert"], "%.2f"),
            fmt(r["pcie_fraction"], "%.3g"),
            human_bytes(r["h2d_bytes"]), human_bytes(r["d2h_bytes"]), r["modes"] or "-",
            r["partitions"] or "-", r["faults"] or "-", human_bytes(r["budget_bytes"]),
            r["reason"] or "")) + " |")
    caches = sorted({cache for bc in cases.values() for cache in bc}, key=cache_key)
    for cache in caches:
        configs = [c for c in CONFIG_ORDER if any(c in bc.get(cache, {}) for bc in cases.values())]
        for c in configs:
            rs = [bc[cache][c] for bc in cases.values() if c in bc.get(cache, {})]
            npass = sum(r["status"] == "PASS" for r in rs)
            g = [geomean([num(r[k]) for r in rs]) for k in ("speedup_vs_cpu", "infgpu", "vs_expert", "pcie_fraction")]
            cells = ["**geomean**", c, cache, f"{npass}/{len(rs)} PASS", "", "", "", "",
                     "%.2fx" % g[0] if g[0] else "-", "%.2f" % g[1] if g[1] else "-",
                     "%.2f" % g[2] if g[2] else "-", "%.2f" % g[3] if g[3] else "-",
                     "", "", "", "", "", "", ""]
            out.append("| " + " | ".join(cells) + " |")
    out += ["",
            "Columns: *median s*, *min-max s*: the sample's own `time:` (first write to last read) over the "
            "passing timed repeats (warm-up runs left out); *runs*: passing / timed; *cache*: the compiler "
            "caches the runs saw (warm: per-configuration folders its warm-up filled; cold: new empty "
            "folders per run; vastwarm: NVIDIA's and PoCL's cold, VAST's warm); *hash = ref*: every "
            "repeat's output hash against the reference run's (native, else cpu; `ref` marks the "
            "reference); *vs CPU* = cpu median / median; *InfGPU* = native median / median; *vs expert* "
            "= expert median / median; *PCIe bound* = (inputs in + outputs out, each once) / pinned rate "
            "/ median; *h2d*, *d2h*: bytes VAST's page cache moved in the median run (`VAST_STATS`); "
            "*budget*: `VAST_DEVICE_MEMORY` (expert: its footprint limit). Every ratio compares medians "
            "of the same case and cache mode. Geometric means over the rows that have the value; rows "
            "that failed, were refused, timed out or were skipped say why in *reason* (MIXED: some "
            "repeats passed).", ""]
    for note in notes:
        if note:
            out += [note, ""]
    out += ["## Goals (issue 17)", ""] + goals_md(gs) + [
        "", "Each goal is a ratio of medians of this run; *not measured* says which rows it needs.", ""]
    out += ["## Commands", "", "```"] + commands + ["```", "",
            "Every run's exact command and environment: commands.txt.", ""]
    with open(path, "w") as f:
        f.write("\n".join(out))


# ---- plots -----------------------------------------------------------------------------------

def gnuplot(script_path, text):
    if not shutil.which("gnuplot"):
        print("report: gnuplot not found: plots skipped (apt-get install gnuplot-nox, "
              "or rerun report.py where it is)", file=sys.stderr)
        return "not drawn here (no gnuplot)"
    with open(script_path, "w") as f:
        f.write(text)
    res = subprocess.run(["gnuplot", script_path], capture_output=True, text=True)
    if res.returncode != 0:
        print("report: gnuplot failed: " + res.stderr.strip(), file=sys.stderr)
        return "not drawn (gnuplot failed)"
    return ""


def write_png(out_dir, cases):
    """Grouped bars of median time / native median per case and cache mode (log scale)."""
    png = os.path.join(out_dir, "results.png")
    if os.path.exists(png):
        os.remove(png)  # never leave a stale plot next to new tables
    groups = [(case, cache) for case in cases for cache in sorted(cases[case], key=cache_key)
              if cases[case][cache].get("native", {}).get("status") == "PASS"]
    configs = [c for c in CONFIG_ORDER if c != "native"
               and any(num(cases[k][cache].get(c, {}).get("time_vs_native")) for k, cache in groups)]
    notes = []
    left_out = sorted({case_label(k, cases) for k in cases} - {case_label(k, cases) for k, _ in groups})
    if left_out:
        notes.append("results.png leaves out samples without a passing native run: " + ", ".join(left_out))
    if not groups or not configs:
        return "results.png not drawn: no sample has a passing native run and another passing configuration"
    multi_cache = len({cache for _, cache in groups}) > 1
    width = len(configs) + 1
    dat = os.path.join(out_dir, "results.png.dat")
    with open(dat, "w") as f:
        for c in configs:
            f.write(f"# {c}\n")
            for i, (k, cache) in enumerate(groups):
                v = num(cases[k][cache].get(c, {}).get("time_vs_native"))
                if v:
                    f.write(f"{i * width + configs.index(c) + 1} {v:.6g}\n")
            f.write("\n\n")
    labels = [case_label(k, cases) + (f" ({cache})" if multi_cache else "") for k, cache in groups]
    xtics = ", ".join(f"'{lab}' {i * width + (len(configs) + 1) / 2:g}" for i, lab in enumerate(labels))
    colors = {"vast-direct": "#1f77b4", "vast-paged": "#2ca02c", "vast-2x": "#ff7f0e", "vast-4x": "#d62728",
              "expert": "#9467bd", "cpu": "#7f7f7f"}
    plots = ", ".join(f"'{dat}' index {k} using 1:2 with boxes lc rgb '{colors.get(c, '#17becf')}' title '{c}'"
                      for k, c in enumerate(configs))
    err = gnuplot(os.path.join(out_dir, "results.png.gp"), f"""set terminal pngcairo size {max(900, 24 * width * len(groups) + 250)},600 font ',10'
set output '{png}'
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set grid ytics
set key outside right top
set xrange [0:{width * len(groups)}]
set xtics ({xtics}) rotate by -30 scale 0
set ylabel 'median time / native median (log)'
set title 'VAST samples: median time normalised to the native run (1 = native; lower is faster)'
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 front
plot {plots}
""")
    if err:
        return "results.png " + err
    return "; ".join(notes)


def write_sweep_png(out_dir, cases):
    """Median seconds per GB against data size for samples run at several sizes."""
    png = os.path.join(out_dir, "sweep.png")
    if os.path.exists(png):
        os.remove(png)
    sizes = {}
    for sample, size in cases:
        sizes.setdefault(sample, []).append(size)
    swept = [s for s, v in sizes.items() if len(v) > 1]
    if not swept:
        return ""
    all_caches = {cache for case in cases for cache in cases[case]}
    cache = "warm" if "warm" in all_caches else sorted(all_caches, key=cache_key)[0]
    dat = os.path.join(out_dir, "sweep.png.dat")
    series = []
    with open(dat, "w") as f:
        for sample in swept:
            for c in CONFIG_ORDER:
                pts = []
                for size in sizes[sample]:
                    r = cases[(sample, size)].get(cache, {}).get(c, {})
                    t, d = num(r.get("median_s")), num(r.get("data_bytes"))
                    if t and d:
                        pts.append((d / 2**30, t / (d / 1e9)))
                if pts:
                    f.write(f"# {sample} {c}\n")
                    for x, y in sorted(pts):
                        f.write(f"{x:.6g} {y:.6g}\n")
                    f.write("\n\n")
                    series.append(f"{sample} {c}")
    if not series:
        return "sweep.png not drawn: no passing rows at several sizes"
    plots = ", ".join(f"'{dat}' index {k} using 1:2 with linespoints title '{t}'" for k, t in enumerate(series))
    err = gnuplot(os.path.join(out_dir, "sweep.png.gp"), f"""set terminal pngcairo size 1100,650 font ',10'
set output '{png}'
set logscale x 2
set logscale y
set format x '%g'
set grid
set key outside right top
set xlabel 'data (GiB, log)'
set ylabel 'median seconds per GB of data (log)'
set title 'Cost curve: time per GB against size ({cache} caches)'
plot {plots}
""")
    return ("sweep.png " + err) if err else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sources", nargs="+")
    ap.add_argument("--out")
    ap.add_argument("--pcie-gbs", type=float)
    ap.add_argument("--pcie-both-gbs", type=float)
    ap.add_argument("--overhead")
    a = ap.parse_args()
    rows, metas, commands = read_sources(a.sources)
    if not rows:
        sys.exit("report: no rows")
    out_dir = a.out or (a.sources[0] if os.path.isdir(a.sources[0]) else os.path.dirname(a.sources[0]) or ".")
    os.makedirs(out_dir, exist_ok=True)
    pcie = a.pcie_gbs or num(next((m.get("pcie_gbs") for m in metas if m.get("pcie_gbs")), None)) or DEFAULT_PCIE_GBS
    both = a.pcie_both_gbs or BOTH_DIRECTIONS * pcie
    overhead = a.overhead or next((os.path.join(m["_folder"], "overhead.md") for m in metas
                                   if os.path.isfile(os.path.join(m["_folder"], "overhead.md"))), None)
    cases = aggregate(rows)
    if not cases:
        sys.exit("report: no timed rows (only warm-up runs)")
    derive(cases, pcie)
    write_csv(os.path.join(out_dir, "results.csv"), list(ordered(cases)))
    notes = [write_png(out_dir, cases), write_sweep_png(out_dir, cases)]
    gs = goals(cases, metas, pcie, both, overhead)
    write_md(os.path.join(out_dir, "results.md"), cases, metas, commands, pcie, notes, gs)
    print(f"report: {len(rows)} rows -> {out_dir}/results.csv, results.md"
          + ("" if notes[0].startswith("results.png not") else ", results.png"))
    print("\n## Goals (issue 17)\n")
    print("\n".join(goals_md(gs)))


if __name__ == "__main__":
    main()
