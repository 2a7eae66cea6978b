#!/usr/bin/env python3
"""samples/bench/report.py: the harness's report step (issue 7); python3 standard library only.

Reads the raw rows that samples/bench/run.sh appended (one or more result folders or raw.csv
files; for the same sample and configuration the last row read wins) and writes
  results.csv  every raw column plus the derived ones below,
  results.md   date, host, device, driver, the sizes, the table with geometric means per
               configuration at the bottom, the exact commands,
  results.png  time normalised to native per sample and configuration (log scale), drawn with
               gnuplot when it is installed (else a message and no PNG).

Derived columns, all against runs of the same sample at the same size:
  ref_config      the reference: native when it passed, else cpu
  hash_equal      yes/no against the reference's hash (ref on the reference itself)
  speedup_vs_cpu  cpu time / this time
  infgpu          native time / this time: the fraction of the in-core GPU ("InfGPU") reached
  bound_bytes     in_bytes + out_bytes: what must cross the bus at least (inputs written,
                  outputs read back, each once; run.sh derives them from the sample's header)
  bound_s         bound_bytes / (pcie_gbs * 1e9): the time of those bytes at the pinned rate
                  in one direction at a time (both at once reach ~1.6x that; FACTS.md)
  pcie_fraction   bound_s / this time (not for cpu rows: no bus)
  time_vs_native  this time / native time (what results.png shows)

usage: report.py [--out DIR] [--pcie-gbs R] [--title T] SOURCE...
  SOURCE   a folder written by run.sh (raw.csv, meta.txt, commands.txt) or a raw CSV file
  --out    where to write (default: the first SOURCE folder)
  --pcie-gbs  pinned PCIe rate in GB/s (default: meta.txt's, else 54.9 from FACTS.md)
"""
import argparse
import csv
import math
import os
import shutil
import subprocess
import sys

CONFIG_ORDER = ["native", "vast-direct", "vast-paged", "vast-2x", "vast-4x", "expert", "cpu"]
DEFAULT_PCIE_GBS = 54.9


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
                rows[(r["sample"], r["config"])] = r
        meta = {}
        mpath = os.path.join(folder, "meta.txt")
        if os.path.isfile(mpath):
            with open(mpath) as f:
                for line in f:
                    if ": " in line:
                        k, v = line.rstrip("\n").split(": ", 1)
                        meta[k] = v
        metas.append(meta)
        cpath = os.path.join(folder, "commands.txt")
        if os.path.isfile(cpath):
            with open(cpath) as f:
                commands.extend(line.rstrip("\n") for line in f if line.strip())
    return list(rows.values()), metas, commands


def num(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def derive(rows, pcie_gbs):
    by_sample = {}
    for r in rows:
        by_sample.setdefault(r["sample"], {})[r["config"]] = r
    for sample, cfgs in by_sample.items():
        passed = {c: r for c, r in cfgs.items() if r["status"] == "PASS" and num(r["time_s"])}
        ref = "native" if "native" in passed else "cpu" if "cpu" in passed else ""
        native_t = num(passed["native"]["time_s"]) if "native" in passed else None
        cpu_t = num(passed["cpu"]["time_s"]) if "cpu" in passed else None
        for c, r in cfgs.items():
            t = num(r["time_s"]) if r["status"] == "PASS" else None
            r["ref_config"] = ref
            if r["status"] != "PASS" or not ref or not r["hash"]:
                r["hash_equal"] = "-"
            elif c == ref:
                r["hash_equal"] = "ref"
            else:
                r["hash_equal"] = "yes" if r["hash"] == cfgs[ref]["hash"] else "no"
            inb, outb = num(r["in_bytes"]), num(r["out_bytes"])
            bound = (inb or 0) + (outb or 0) if inb is not None or outb is not None else None
            r["bound_bytes"] = "%.0f" % bound if bound is not None else ""
            bound_s = bound / (pcie_gbs * 1e9) if bound is not None else None
            r["bound_s"] = "%.6f" % bound_s if bound_s is not None else ""
            r["speedup_vs_cpu"] = "%.4f" % (cpu_t / t) if t and cpu_t else ""
            r["infgpu"] = "%.4f" % (native_t / t) if t and native_t else ""
            r["pcie_fraction"] = "%.4f" % (bound_s / t) if t and bound_s and c != "cpu" else ""
            r["time_vs_native"] = "%.4f" % (t / native_t) if t and native_t else ""
    return by_sample


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


def ordered(by_sample):
    for sample in by_sample:  # first-seen order, as the preset lists them
        cfgs = by_sample[sample]
        for c in sorted(cfgs, key=lambda c: CONFIG_ORDER.index(c) if c in CONFIG_ORDER else 99):
            yield sample, c, cfgs[c]


def write_csv(path, rows_in_order):
    rows = [r for _, _, r in rows_in_order]
    fields = [k for k in rows[0] if not k.startswith("_")]
    for extra in ("ref_config", "hash_equal", "speedup_vs_cpu", "infgpu", "bound_bytes", "bound_s",
                  "pcie_fraction", "time_vs_native"):
        if extra not in fields:
            fields.append(extra)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def write_md(path, by_sample, metas, commands, pcie_gbs, png_note):
    meta = metas[0] if metas else {}
    out = ["# VAST benchmark results", ""]
    for key in ("date", "host", "cpu", "platform", "device", "driver", "device_memory", "max_alloc",
                "cpu_platform", "libvast", "preset", "vast_env"):
        vals = sorted({m.get(key, "") for m in metas if m.get(key)})
        if vals:
            out.append(f"- {key}: {'; '.join(vals)}")
    out.append(f"- PCIe rate for the bound: {pcie_gbs:g} GB/s (pinned, FACTS.md)")
    out.append("")

    out += ["## Sizes", "",
            "| sample | args | data | in (min.) | out (min.) | PCIe bound s |", "|---|---|---|---|---|---|"]
    for sample, cfgs in by_sample.items():
        r = cfgs.get("native") or next(iter(cfgs.values()))
        args = r["args"].replace(" --partitioned", "").split(" --chunk")[0]
        out.append(f"| {sample} | `{md_cell(args)}` | {human_bytes(r['data_bytes'])} | {human_bytes(r['in_bytes'])} "
                   f"| {human_bytes(r['out_bytes'])} | {fmt(r['bound_s'], '%.4f')} |")
    out.append("")

    out += ["## Results", "",
            "| sample | config | status | time s | hash = ref | vs CPU | InfGPU | PCIe bound | h2d | d2h "
            "| mode | partitions | faults | budget | reason |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for sample, c, r in ordered(by_sample):
        out.append("| " + " | ".join(md_cell(x) for x in (
            sample, c, r["status"], fmt(r["time_s"], "%.4g"), r["hash_equal"],
            fmt(r["speedup_vs_cpu"], "%.2f", "x"), fmt(r["infgpu"], "%.2f"), fmt(r["pcie_fraction"], "%.3g"),
            human_bytes(r["h2d_bytes"]), human_bytes(r["d2h_bytes"]), r["modes"] or "-",
            r["partitions"] or "-", r["faults"] or "-", human_bytes(r["budget_bytes"]),
            r["reason"] or "")) + " |")
    configs = [c for c in CONFIG_ORDER if any(c in cfgs for cfgs in by_sample.values())]
    for c in configs:
        rs = [cfgs[c] for cfgs in by_sample.values() if c in cfgs]
        npass = sum(r["status"] == "PASS" for r in rs)
        g = [geomean([num(r[k]) for r in rs]) for k in ("speedup_vs_cpu", "infgpu", "pcie_fraction")]
        cells = ["**geomean**", c, f"{npass}/{len(rs)} PASS", "", "",
                 "%.2fx" % g[0] if g[0] else "-", "%.2f" % g[1] if g[1] else "-", "%.2f" % g[2] if g[2] else "-",
                 "", "", "", "", "", "", ""]
        out.append("| " + " | ".join(cells) + " |")
    out += ["",
            "Columns: *time* is the sample's own `time:` (first write to last read); *hash = ref* compares "
            "the output hash with the reference run's (native, else cpu; `ref` marks the reference); "
            "*vs CPU* = cpu time / time; *InfGPU* = native time / time (the in-core GPU's fraction "
            "reached); *PCIe bound* = (inputs in + outputs out, each once) / pinned rate / time; *h2d*, "
            "*d2h*: bytes VAST's page cache moved (`VAST_STATS`); *budget*: `VAST_DEVICE_MEMORY` "
            "(expert: its footprint limit). Geometric means over the passing rows that have the "
            "value; rows that failed, were refused, timed out or were skipped say why in *reason*.",
            ""]
    if png_note:
        out += [png_note, ""]
    out += ["## Commands", "", "```"] + commands + ["```", ""]
    with open(path, "w") as f:
        f.write("\n".join(out))


def write_png(out_dir, by_sample):
    """Grouped bars of time / native time per sample (log scale), through gnuplot."""
    png = os.path.join(out_dir, "results.png")
    if os.path.exists(png):
        os.remove(png)  # never leave a stale plot next to new tables
    samples = [s for s, cfgs in by_sample.items() if cfgs.get("native", {}).get("status") == "PASS"]
    configs = [c for c in CONFIG_ORDER if c != "native"
               and any(num(by_sample[s].get(c, {}).get("time_vs_native")) for s in samples)]
    left_out = [s for s in by_sample if s not in samples]
    no_bar = [c for c in CONFIG_ORDER if c != "native" and c not in configs
              and any(c in cfgs for cfgs in by_sample.values())]
    notes = []
    if left_out:
        notes.append("results.png leaves out samples without a passing native run: " + ", ".join(left_out))
    if no_bar:
        notes.append("no bars for configurations without a passing run: " + ", ".join(no_bar))
    if not samples or not configs:
        return "results.png not drawn: no sample has a passing native run and another passing configuration"
    if not shutil.which("gnuplot"):
        print("report: gnuplot not found: results.png skipped (apt-get install gnuplot-nox, "
              "or rerun report.py where it is)", file=sys.stderr)
        return "results.png not drawn here (no gnuplot)"
    # One block per configuration, bars at explicit x positions: missing runs leave gaps.
    width = len(configs) + 1
    dat = os.path.join(out_dir, "results.png.dat")
    with open(dat, "w") as f:
        for c in configs:
            f.write(f"# {c}\n")
            for i, s in enumerate(samples):
                v = num(by_sample[s].get(c, {}).get("time_vs_native"))
                if v:
                    f.write(f"{i * width + configs.index(c) + 1} {v:.6g}\n")
            f.write("\n\n")
    xtics = ", ".join(f"'{s}' {i * width + (len(configs) + 1) / 2:g}" for i, s in enumerate(samples))
    colors = {"vast-direct": "#1f77b4", "vast-paged": "#2ca02c", "vast-2x": "#ff7f0e", "vast-4x": "#d62728",
              "expert": "#9467bd", "cpu": "#7f7f7f"}
    plots = ", ".join(f"'{dat}' index {k} using 1:2 with boxes lc rgb '{colors.get(c, '#17becf')}' title '{c}'"
                      for k, c in enumerate(configs))
    script = os.path.join(out_dir, "results.png.gp")
    with open(script, "w") as f:
        f.write(f"""set terminal pngcairo size {max(900, 24 * width * len(samples) + 250)},600 font ',10'
set output '{png}'
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set grid ytics
set key outside right top
set xrange [0:{width * len(samples)}]
set xtics ({xtics}) rotate by -30 scale 0
set ylabel 'time / native time (log)'
set title 'VAST samples: time normalised to the native run (1 = native; lower is faster)'
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 front
plot {plots}
""")
    res = subprocess.run(["gnuplot", script], capture_output=True, text=True)
    if res.returncode != 0:
        print("report: gnuplot failed: " + res.stderr.strip(), file=sys.stderr)
        return "results.png not drawn (gnuplot failed)"
    return "; ".join(notes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sources", nargs="+")
    ap.add_argument("--out")
    ap.add_argument("--pcie-gbs", type=float)
    a = ap.parse_args()
    rows, metas, commands = read_sources(a.sources)
    if not rows:
        sys.exit("report: no rows")
    out_dir = a.out or (a.sources[0] if os.path.isdir(a.sources[0]) else os.path.dirname(a.sources[0]) or ".")
    os.makedirs(out_dir, exist_ok=True)
    pcie = a.pcie_gbs or num(next((m.get("pcie_gbs") for m in metas if m.get("pcie_gbs")), None)) or DEFAULT_PCIE_GBS
    by_sample = derive(rows, pcie)
    write_csv(os.path.join(out_dir, "results.csv"), list(ordered(by_sample)))
    note = write_png(out_dir, by_sample)
    write_md(os.path.join(out_dir, "results.md"), by_sample, metas, commands, pcie, note)
    print(f"report: {len(rows)} rows -> {out_dir}/results.csv, results.md"
          + ("" if note.startswith("results.png not") else ", results.png"))


if __name__ == "__main__":
    main()
