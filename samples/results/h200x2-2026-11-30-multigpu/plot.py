#!/usr/bin/env python3
"""speedup.svg: two H200s merged against one H200 at a member's budget (issue 15's compute-bound
sizes at 4x), before (9ab141a, or the same library with XNOSTAGE=1) and after (kernel-bound
launches staged), one bar per round, from h3-merged.txt and h4.txt. No dependency: plain SVG."""
import re

rows = []  # (sample, call, round, before, after)
one = {}
for line in open("h3-merged.txt"):
    s = line.split()[0]
    if s not in ("MatrixMul", "NBody"):
        continue
    n = [float(x) for x in re.findall(r"N: ([0-9.]+)", line)]
    d = [float(x) for x in re.findall(r" D: ([0-9.]+)", line)][:2]
    od = [float(x) for x in re.findall(r"one GPU D: ([0-9.]+)", line)] + [float(x) for x in re.findall(r"\) D: ([0-9.]+)", line)]
    oo = [float(x) for x in re.findall(r"O: ([0-9.]+)", line)]
    base_one, new_one = sorted(od)[len(od) // 2], sorted(oo)[len(oo) // 2]
    for r in range(2):
        rows.append((s, "h3", r + 1, base_one / d[r], new_one / n[r]))
cur = None
h4 = {}
for line in open("h4.txt"):
    m = re.match(r"-- round (\d) (\w+)", line)
    if m:
        cur = (int(m.group(1)), m.group(2))
        continue
    f = line.split()
    if cur and f and f[0] in ("MatrixMul", "NBody") and len(f) > 5:
        h4.setdefault((f[0], cur[0]), {})[cur[1]] = float(f[4]) / float(f[5])
for (s, r), v in sorted(h4.items()):
    rows.append((s, "h4", r, v.get("base"), v.get("new")))

rows.sort(key=lambda t: (t[0], t[1], t[2]))
W, H, L, B = 760, 360, 60, 300
ymax = 2.6
def y(v):
    return B - v / ymax * (B - 30)
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{W/2}" y="16" text-anchor="middle" font-size="13">Two H200s merged / one H200 at a member\'s budget, 4x (goal 1.8x)</text>']
for t in (0, 0.5, 1.0, 1.5, 2.0, 2.5):
    out.append(f'<line x1="{L}" x2="{W-10}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#ddd"/>')
    out.append(f'<text x="{L-6}" y="{y(t)+4:.1f}" text-anchor="end">{t:.1f}x</text>')
out.append(f'<line x1="{L}" x2="{W-10}" y1="{y(1.8):.1f}" y2="{y(1.8):.1f}" stroke="red" stroke-dasharray="5,3"/>')
x = L + 10
span = {}
for i, (s, call, r, before, after) in enumerate(rows):
    if i and rows[i - 1][0] != s:
        x += 30
    x0 = x
    for v, c in ((before, "#9aa7b8"), (after, "#3060a0")):
        if v is not None:
            out.append(f'<rect x="{x}" y="{y(v):.1f}" width="14" height="{B - y(v):.1f}" fill="{c}"/>')
            out.append(f'<text x="{x+7}" y="{y(v)-3:.1f}" text-anchor="middle" font-size="8">{v:.2f}</text>')
        x += 15
    out.append(f'<text x="{x0+15}" y="{B+14}" text-anchor="middle" font-size="9">{call} r{r}</text>')
    lo, hi = span.get(s, (x0, x))
    span[s] = (min(lo, x0), max(hi, x))
    x += 14
names = {"MatrixMul": "MatrixMul 8192 x 65536", "NBody": "NBody 1 Mi bodies, 2 steps"}
for s, (lo, hi) in span.items():
    out.append(f'<text x="{(lo + hi) / 2:.0f}" y="{B+34}" text-anchor="middle">{names[s]}</text>')
out.append(f'<rect x="{W-230}" y="30" width="12" height="10" fill="#9aa7b8"/><text x="{W-214}" y="39">before (9ab141a / XNOSTAGE=1)</text>')
out.append(f'<rect x="{W-230}" y="46" width="12" height="10" fill="#3060a0"/><text x="{W-214}" y="55">kernel-bound launches staged</text>')
out.append("</svg>")
open("speedup.svg", "w").write("\n".join(out) + "\n")
for row in rows:
    print(*row)
