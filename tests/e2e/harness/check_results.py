#!/usr/bin/env python3
"""check_results.py: check a harness results folder (results.csv, results.md, logs/).

usage: check_results.py --samples A,B --configs X,Y [--caches warm] [--repeats N] DIR
Every sample must have a row per configuration and cache mode (expert: the samples that offer
--partitioned) with status PASS over --repeats timed runs (warm-up runs left out), a hash equal
to the reference's (or be the reference), its logs, the mode its configuration forces
(vast-direct: direct, vast-paged: paged, vast-2x/-4x: partitioned among its launches), and a
row in results.md; results.md must end its table with a geometric-mean row per configuration
and cache mode, and hold the goals table. Exit 0 or 1."""
import argparse
import csv
import os
import sys

EXPERT = {"saxpy", "MatrixMul", "vecadd", "BlackScholes", "SpMV", "Reduction", "MersenneTwister"}
WANT_MODE = {"vast-direct": "direct", "vast-paged": "paged"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", required=True)
    ap.add_argument("--configs", required=True)
    ap.add_argument("--caches", default="warm")
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--skip-ok", default="", help="SAMPLE:CONFIG,... rows that must be SKIPPED with a reason")
    ap.add_argument("dir")
    a = ap.parse_args()
    problems = []
    path = os.path.join(a.dir, "results.csv")
    if not os.path.isfile(path):
        sys.exit(f"check: FAIL: no {path}")
    with open(path, newline="") as f:
        rows = {(r["sample"], r["config"], r["cache"]): r for r in csv.DictReader(f)}
    md_path = os.path.join(a.dir, "results.md")
    md = open(md_path).read() if os.path.isfile(md_path) else ""
    if not md:
        problems.append(f"no {md_path}")
    configs = a.configs.split(",")
    caches = a.caches.split(",")
    skip_ok = {tuple(x.split(":", 1)) for x in a.skip_ok.split(",") if ":" in x}
    for cache in caches:
        for s in a.samples.split(","):
            for c in configs:
                if c == "expert" and s not in EXPERT:
                    continue
                r = rows.get((s, c, cache))
                if r is None:
                    problems.append(f"{s} {c} {cache}: no row in results.csv")
                    continue
                if (s, c) in skip_ok:
                    if r["status"] != "SKIPPED" or not r["reason"]:
                        problems.append(f"{s} {c} {cache}: expected SKIPPED with a reason, got {r['status']}")
                elif r["status"] != "PASS":
                    problems.append(f"{s} {c} {cache}: {r['status']}: {r['reason']}")
                elif r["hash_equal"] not in ("yes", "ref"):
                    problems.append(f"{s} {c} {cache}: hash {r['hash']} differs from the {r['ref_config']} reference")
                if a.repeats is not None and r["runs"] != str(a.repeats):
                    problems.append(f"{s} {c} {cache}: {r['runs']} timed runs, not {a.repeats}")
                if r["status"] == "PASS" and not (float(r["min_s"]) <= float(r["median_s"]) <= float(r["max_s"])):
                    problems.append(f"{s} {c} {cache}: median {r['median_s']} outside {r['min_s']}-{r['max_s']}")
                if c in WANT_MODE and r["status"] == "PASS" and r["modes"] != WANT_MODE[c]:
                    problems.append(f"{s} {c} {cache}: ran in mode '{r['modes']}', not {WANT_MODE[c]}")
                if c in ("vast-2x", "vast-4x") and r["status"] == "PASS" and "partitioned" not in r["modes"].split(","):
                    problems.append(f"{s} {c} {cache}: data over the budget but no partitioned launch (modes '{r['modes']}')")
                for log in ("stdout", "stderr"):
                    if r["status"] != "SKIPPED" and not os.path.isfile(os.path.join(a.dir, r[log] or "-")):
                        if os.path.isfile(os.path.join(a.dir, "raw.csv")):  # a copy without logs is fine
                            problems.append(f"{s} {c} {cache}: no {log} log")
                if f"| {s} | {c} | {cache} | {r['status']} |" not in md:
                    problems.append(f"{s} {c} {cache}: no row in results.md")
        for c in configs:
            if f"| **geomean** | {c} | {cache} |" not in md:
                problems.append(f"results.md: no geometric-mean row for {c} {cache}")
    if "## Goals (issue 17)" not in md:
        problems.append("results.md: no goals table")
    for p in problems:
        print("check: " + p)
    print("check: " + ("FAIL" if problems else f"PASS ({len(rows)} rows)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
