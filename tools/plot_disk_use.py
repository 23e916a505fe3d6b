#!/usr/bin/env python3
"""Plots disk use over time from `cask-harness bench-compaction --csv FILE` as an SVG (standard library only).

usage: python3 tools/plot_disk_use.py RESULTS.csv OUT.svg LIMIT_BYTES
"""
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
limit = int(sys.argv[3])
xs = [int(r["bytes_put"]) for r in rows]
files = [int(r["file_bytes"]) for r in rows]
lives = [int(r["live_bytes"]) for r in rows]
W, H, M = 720, 360, 50
xmax = max(xs) or 1
ymax = max(max(files), limit) * 1.15
def px(x): return M + (W - 2 * M) * x / xmax
def py(y): return H - M - (H - 2 * M) * y / ymax
def line(vals, color, label, dy):
    pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, vals))
    return (f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{pts}"/>'
            f'<text x="{W - M - 150}" y="{M + dy}" fill="{color}" font-size="12">{label}</text>')
mib = 1 << 20
parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif">',
         '<rect width="100%" height="100%" fill="white"/>',
         f'<line x1="{M}" y1="{H-M}" x2="{W-M}" y2="{H-M}" stroke="black"/>',
         f'<line x1="{M}" y1="{M}" x2="{M}" y2="{H-M}" stroke="black"/>',
         f'<line x1="{M}" y1="{py(limit):.1f}" x2="{W-M}" y2="{py(limit):.1f}" stroke="red" stroke-dasharray="4"/>',
         f'<text x="{M+5}" y="{py(limit)-4:.1f}" fill="red" font-size="12">byte limit {limit // mib} MiB</text>',
         line(files, "#1f77b4", "file bytes", 0), line(lives, "#2ca02c", "live bytes", 16),
         f'<text x="{W/2-80}" y="{H-12}" font-size="12">bytes put ({xmax // mib} MiB total)</text>',
         f'<text x="8" y="{M-10}" font-size="12">MiB on disk (max {ymax / 1.15 / mib:.0f})</text>']
for frac in (0.25, 0.5, 0.75, 1.0):
    y = ymax / 1.15 * frac
    parts.append(f'<text x="4" y="{py(y)+4:.1f}" font-size="10">{y / mib:.0f}</text>')
parts.append("</svg>")
open(sys.argv[2], "w").write("\n".join(parts))
