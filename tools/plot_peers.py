#!/usr/bin/env python3
"""Plots `cask-versus` results as SVG (standard library only).

usage: python3 tools/plot_peers.py Benchmarks/results/peers

Reads results.json and overwrite-disk.csv from that folder and writes throughput.svg,
latency.svg and overwrite-disk.svg next to them.
"""
import csv
import json
import math
import os
import sys

folder = sys.argv[1]
data = json.load(open(os.path.join(folder, "results.json")))
phases = data["phases"]
engines = []
for p in phases:
    if p["engine"] not in engines:
        engines.append(p["engine"])
COLORS = {"cask": "#d62728", "append": "#7f7f7f", "leveldb": "#1f77b4", "rocksdb": "#ff7f0e",
          "lmdb": "#2ca02c", "sqlite": "#9467bd"}
def color(e): return COLORS.get(e, "#17becf")
def esc(s): return s.replace("&", "&amp;").replace("<", "&lt;")
def cell(e, ph):
    for p in phases:
        if p["engine"] == e and p["phase"] == ph:
            return p
    return None
order = [p["phase"] for p in phases if p["engine"] == engines[0] and p["phase"] != "open"]
subtitle = f'{data["date"]}, {data["machine"]}, {data["count"]:,} keys, median of {data["runs"]} runs'

def legend(x, y):
    out = []
    for i, e in enumerate(engines):
        out.append(f'<rect x="{x}" y="{y + i * 16}" width="12" height="12" fill="{color(e)}"/>'
                   f'<text x="{x + 18}" y="{y + i * 16 + 10}" font-size="12">{esc(e)}</text>')
    return "".join(out)

def log_bars(name, title, rows, value, unit, lo, hi):
    """Horizontal grouped bars on a log axis: one group per row, one bar per engine."""
    bar, gap = 9, 10
    left, right, top = 190, 150, 60
    width = 900
    group = bar * len(engines) + gap
    height = top + group * len(rows) + 40
    plot = width - left - right
    def px(v): return left + plot * (math.log10(max(v, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif">',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="{left}" y="22" font-size="15" font-weight="bold">{esc(title)}</text>',
             f'<text x="{left}" y="40" font-size="11" fill="#555">{esc(subtitle)}</text>']
    decade = 10 ** math.floor(math.log10(lo))
    while decade <= hi:
        if decade >= lo:
            x = px(decade)
            label = f"{decade/1e6:g}M" if decade >= 1e6 else f"{decade/1e3:g}K" if decade >= 1e3 else f"{decade:g}"
            parts.append(f'<line x1="{x:.1f}" y1="{top - 5}" x2="{x:.1f}" y2="{height - 35}" stroke="#ddd"/>'
                         f'<text x="{x:.1f}" y="{height - 20}" font-size="11" text-anchor="middle">{label}</text>')
        decade *= 10
    parts.append(f'<text x="{left + plot / 2}" y="{height - 5}" font-size="11" text-anchor="middle">{esc(unit)} (log scale)</text>')
    for r, row in enumerate(rows):
        y0 = top + r * group
        parts.append(f'<text x="{left - 8}" y="{y0 + group / 2:.1f}" font-size="12" text-anchor="end">{esc(row)}</text>')
        for i, e in enumerate(engines):
            v = value(e, row)
            if v is None:
                continue
            y = y0 + i * bar
            parts.append(f'<rect x="{left}" y="{y}" width="{max(1, px(v) - left):.1f}" height="{bar - 1}" fill="{color(e)}"/>')
    parts.append(legend(width - right + 20, top))
    parts.append("</svg>")
    open(os.path.join(folder, name), "w").write("\n".join(parts))

def ops(e, ph):
    p = cell(e, ph)
    return p["operationsPerSecond"] if p else None
log_bars("throughput.svg", "Operations per second by workload and engine", order, ops, "operations per second", 1e3, 1e7)

lat_rows = []
lat_phases = ["fillrandom-100B", "readrandom", "mixed-90r10w-2threads", "overwrite", "sync-every-write"]
for ph in lat_phases:
    for pct in ["p50", "p99", "p999"]:
        lat_rows.append(f"{ph} {pct}")
def lat(e, row):
    ph, pct = row.rsplit(" ", 1)
    p = cell(e, ph)
    return p[pct] if p else None
log_bars("latency.svg", "Latency percentiles (HdrHistogram)", lat_rows, lat, "microseconds", 0.1, 1e5)

# Disk use during the overwrite phase.
rows = list(csv.DictReader(open(os.path.join(folder, "overwrite-disk.csv"))))
W, H, L, R, T, B = 900, 420, 80, 150, 50, 50
xmax = max(int(r["bytes_put"]) for r in rows) or 1
ymax = max(int(r["disk_bytes"]) for r in rows) * 1.1 or 1
def px(x): return L + (W - L - R) * x / xmax
def py(y): return H - B - (H - T - B) * y / ymax
mib = 1 << 20
parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif">',
         '<rect width="100%" height="100%" fill="white"/>',
         f'<text x="{L}" y="22" font-size="15" font-weight="bold">Disk use under random overwrite (Cask with a byte limit; the peers keep everything)</text>',
         f'<text x="{L}" y="40" font-size="11" fill="#555">{esc(subtitle)}</text>',
         f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
         f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>',
         f'<text x="{(L + W - R) / 2}" y="{H - 12}" font-size="11" text-anchor="middle">MiB put (keys + values)</text>']
for i in range(6):
    y = ymax * i / 5
    parts.append(f'<text x="{L - 6}" y="{py(y) + 4:.1f}" font-size="11" text-anchor="end">{y / mib:.0f} MiB</text>'
                 f'<line x1="{L}" y1="{py(y):.1f}" x2="{W - R}" y2="{py(y):.1f}" stroke="#eee"/>')
    x = xmax * i / 5
    parts.append(f'<text x="{px(x):.1f}" y="{H - B + 16}" font-size="11" text-anchor="middle">{x / mib:.0f}</text>')
limit = 64 * mib * data["count"] / 1_000_000
parts.append(f'<line x1="{L}" y1="{py(limit):.1f}" x2="{W - R}" y2="{py(limit):.1f}" stroke="{color("cask")}" stroke-dasharray="5"/>'
             f'<text x="{L + 6}" y="{py(limit) - 5:.1f}" font-size="11" fill="{color("cask")}">Cask byte limit {limit / mib:.0f} MiB</text>')
for e in engines:
    pts = " ".join(f'{px(int(r["bytes_put"])):.1f},{py(int(r["disk_bytes"])):.1f}' for r in rows if r["engine"] == e)
    parts.append(f'<polyline fill="none" stroke="{color(e)}" stroke-width="1.8" points="{pts}"/>')
parts.append(legend(W - R + 20, T))
parts.append("</svg>")
open(os.path.join(folder, "overwrite-disk.svg"), "w").write("\n".join(parts))
print("wrote throughput.svg, latency.svg, overwrite-disk.svg in", folder)
