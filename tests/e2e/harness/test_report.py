#!/usr/bin/env python3
"""test_report.py: report.py on raw rows made up here, with known medians, spreads and goals.

usage: test_report.py REPORT_PY
Warm-up rows must be left out of the medians, min-max must be the spread of the timed runs,
every ratio must come from medians of the same cache mode, a repeat with another hash must make
hash = ref 'no', and each goal must get the verdict its numbers give (met / not met / not
measured), the empty launch from overhead.md. Exit 0 or 1."""
import csv
import os
import subprocess
import sys
import tempfile

COLS = ("sample size_args config cache repeat warmup round seq args env platform_arg status reason rc "
        "wall_s time_s hash data_bytes in_bytes out_bytes budget_bytes modes").split()


def row(sample, config, cache, repeat, time_s, warmup="no", hash_="aa", size="-n 1000", data=8e9, status="PASS"):
    return {"sample": sample, "size_args": size, "config": config, "cache": cache, "repeat": str(repeat),
            "warmup": warmup, "args": size, "status": status, "time_s": "%g" % time_s if time_s else "",
            "hash": hash_, "data_bytes": "%.0f" % data, "in_bytes": "%.0f" % data, "out_bytes": "%.0f" % (data / 2),
            "reason": "" if status == "PASS" else "why"}


def main():
    report = sys.argv[1]
    rows = []
    # saxpy warm: native 1, 3, 2 (+ a 100 s warm-up), paged 2.0, 2.1, 1.9: ratio 1.0; direct slower.
    for rep, t in ((1, 1.0), (2, 3.0), (3, 2.0)):
        rows.append(row("saxpy", "native", "warm", rep, t))
    rows.append(row("saxpy", "native", "warm", 1, 100.0, warmup="yes"))
    for rep, t in ((1, 2.0), (2, 2.1), (3, 1.9)):
        rows.append(row("saxpy", "vast-paged", "warm", rep, t))
        rows.append(row("saxpy", "vast-direct", "warm", rep, 4.0))
        rows.append(row("saxpy", "vast-4x", "warm", rep, 5.0))
        rows.append(row("saxpy", "expert", "warm", rep, 4.0, hash_="bb" if rep == 2 else "aa"))
    # vastwarm: native 1.0, paged 2.0: 0.5 -> not met.
    for rep in (1, 2, 3):
        rows.append(row("saxpy", "native", "vastwarm", rep, 1.0))
        rows.append(row("saxpy", "vast-paged", "vastwarm", rep, 2.0))
    # saxpy above the device's memory (100 GB > 80 GB): 10 iterations of 150 GB at 88 GB/s = 17.05 s.
    big = "-n 12Gi --iterations 10"
    for rep in (1, 2, 3):
        rows.append(row("saxpy", "vast-direct", "warm", rep, 20.0, size=big, data=100e9))
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "raw.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLS, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
        with open(os.path.join(d, "meta.txt"), "w") as f:
            f.write("device_memory: 80000000000\npcie_gbs: 55\n")
        with open(os.path.join(d, "overhead.md"), "w") as f:
            f.write("| call | x | y | z | r |\n|---|---|---|---|---|\n"
                    "| clEnqueueNDRangeKernel_empty_us | 10.0 | 12.0 | 13.0 | 1.20x |\n")
        res = subprocess.run([sys.executable, report, "--pcie-both-gbs", "88", d], capture_output=True, text=True)
        print(res.stdout, res.stderr)
        if res.returncode != 0:
            print("test_report: FAIL: report.py exited", res.returncode)
            return 1
        with open(os.path.join(d, "results.csv"), newline="") as f:
            got = {(r["sample"], r["size_args"], r["config"], r["cache"]): r for r in csv.DictReader(f)}
        md = open(os.path.join(d, "results.md")).read()
    problems = []

    def want(key, field, value):
        r = got.get(key)
        if r is None:
            problems.append(f"no row {key}")
        elif r[field] != value:
            problems.append(f"{key} {field}: {r[field]!r}, expected {value!r}")

    small = "-n 1000"
    want(("saxpy", small, "native", "warm"), "median_s", "2.000000")
    want(("saxpy", small, "native", "warm"), "min_s", "1.000000")
    want(("saxpy", small, "native", "warm"), "max_s", "3.000000")
    want(("saxpy", small, "native", "warm"), "runs", "3")
    want(("saxpy", small, "vast-paged", "warm"), "infgpu", "1.0000")
    want(("saxpy", small, "vast-paged", "vastwarm"), "infgpu", "0.5000")
    want(("saxpy", small, "vast-4x", "warm"), "vs_expert", "0.8000")
    want(("saxpy", small, "expert", "warm"), "hash_equal", "no")
    want(("saxpy", small, "vast-paged", "warm"), "hash_equal", "yes")
    goals = {
        "| forced paged >= 0.95 of native, warm caches | geomean 1.000 | >= 0.95 | met |",
        "| forced paged >= 0.9 of native cold, VAST's cache warm | geomean 0.500 | >= 0.90 | not met |",
        "| saxpy: vast-4x >= 0.9 of expert (first launch included) | 0.800 | >= 0.90 | not met |",
        "| MatrixMul: vast-4x >= 0.9 of expert (first launch included) | - | >= 0.90 | not measured |",
        "| saxpy above the device's memory >= 0.85 of the both-directions PCIe bound | 0.852 | >= 0.85 | met |",
        "| empty launch <= 1.5x native | 1.20x | <= 1.50x | met |",
        "| every sample in direct mode at least as fast as native (warm) | worst 0.500 | >= 1.00 | not met |",
    }
    for g in goals:
        if g not in md:
            problems.append("results.md lacks: " + g)
    if md.rfind("## Goals (issue 17)") > md.find("## Results") and "## Goals" not in res.stdout.split("report:")[-1]:
        problems.append("the goals table is not printed last")
    for p in problems:
        print("test_report: " + p)
    print("test_report: " + ("FAIL" if problems else "PASS"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
