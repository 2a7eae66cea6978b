#!/usr/bin/env python3
"""check_results.py: check a harness results folder (results.csv, results.md, logs/).

usage: check_results.py --samples A,B --configs X,Y DIR
Every sample must have a row per configuration (expert: saxpy and MatrixMul only) with status
PASS, a hash equal to the reference's (or be the reference), its logs, the mode its
configuration forces (vast-direct: direct, vast-paged: paged, vast-2x/-4x: partitioned among
its launches), and a row in results.md;
results.md must end its table with a geometric-mean row per configuration. Exit 0 or 1."""
import argparse
import csv
import os
import sys

EXPERT = {"saxpy", "MatrixMul"}
WANT_MODE = {"vast-direct": "direct", "vast-paged": "paged"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", required=True)
    ap.add_argument("--configs", required=True)
    ap.add_argument("dir")
    a = ap.parse_args()
    problems = []
    path = os.path.join(a.dir, "results.csv")
    if not os.path.isfile(path):
        sys.exit(f"check: FAIL: no {path}")
    with open(path, newline="") as f:
        rows = {(r["sample"], r["config"]): r for r in csv.DictReader(f)}
    md_path = os.path.join(a.dir, "results.md")
    md = open(md_path).read() if os.path.isfile(md_path) else ""
    if not md:
        problems.append(f"no {md_path}")
    configs = a.configs.split(",")
    for s in a.samples.split(","):
        for c in configs:
            if c == "expert" and s not in EXPERT:
                continue
            r = rows.get((s, c))
            if r is None:
                problems.append(f"{s} {c}: no row in results.csv")
                continue
            if r["status"] != "PASS":
                problems.append(f"{s} {c}: {r['status']}: {r['reason']}")
            elif r["hash_equal"] not in ("yes", "ref"):
                problems.append(f"{s} {c}: hash {r['hash']} differs from the {r['ref_config']} reference")
            if c in WANT_MODE and r["status"] == "PASS" and r["modes"] != WANT_MODE[c]:
                problems.append(f"{s} {c}: ran in mode '{r['modes']}', not {WANT_MODE[c]}")
            if c in ("vast-2x", "vast-4x") and r["status"] == "PASS" and "partitioned" not in r["modes"].split(","):
                problems.append(f"{s} {c}: data over the budget but no partitioned launch (modes '{r['modes']}')")
            for log in ("stdout", "stderr"):
                if r["status"] != "SKIPPED" and not os.path.isfile(os.path.join(a.dir, r[log] or "-")):
                    if os.path.isfile(os.path.join(a.dir, "raw.csv")):  # a copy without logs is fine
                        problems.append(f"{s} {c}: no {log} log")
            if f"| {s} | {c} | {r['status']} |" not in md:
                problems.append(f"{s} {c}: no row in results.md")
    for c in configs:
        if f"| **geomean** | {c} |" not in md:
            problems.append(f"results.md: no geometric-mean row for {c}")
    for p in problems:
        print("check: " + p)
    print("check: " + ("FAIL" if problems else f"PASS ({len(rows)} rows)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
