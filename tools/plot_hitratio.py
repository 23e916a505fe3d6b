#!/usr/bin/env python3
"""Plots a hit-ratio run (tools/bench-hitratio.sh) with matplotlib.

usage: python3 tools/plot_hitratio.py [Benchmarks/results/hitratio] [svg|png]

Reads summary.csv and cask.jsonl from that folder and writes next to them (SVG unless png is asked for):
  hitratio-bars.svg   hit ratio per trace, one bar per cache (and per rate for Cask)
  hitratio-live.svg   Cask's live data (key and value bytes) and disk use (segment and hint files)
                      over the requests, one panel per trace, with the byte limit and 0.9 of it
Needs matplotlib (`python3 -m pip install matplotlib`).
"""
import csv
import json
import math
import os
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_hitratio.py needs matplotlib: python3 -m pip install matplotlib")

FORMAT = sys.argv[2] if len(sys.argv) > 2 else "svg"
COLORS = {"exact-lru": "#7f7f7f", "belady": "#000000", "best-static": "#c7c7c7", "diskcache": "#1f77b4", "theine": "#2ca02c"}
CASK_COLORS = ["#d62728", "#ff9896", "#8c1a1a", "#e377c2"]


def label(row):
    if row["rate"] == "-":
        return row["cache"]
    return f'{row["cache"]} ({"full speed" if row["rate"] == "full" else row["rate"] + " MB/s"})'


def read_summary(folder):
    with open(os.path.join(folder, "summary.csv"), newline="") as f:
        return list(csv.DictReader(f))


def read_cask(folder):
    with open(os.path.join(folder, "cask.jsonl")) as f:
        return [json.loads(line) for line in f if line.startswith("{")]


def color_of(name, series_names):
    if name.split(" (")[0] in COLORS:
        return COLORS[name.split(" (")[0]]
    cask = [n for n in series_names if n.split(" (")[0] not in COLORS]
    return CASK_COLORS[cask.index(name) % len(CASK_COLORS)]


def plot_bars(folder, rows, subtitle):
    traces = list(dict.fromkeys(r["trace"] for r in rows))
    names = list(dict.fromkeys(label(r) for r in rows))
    values = {(r["trace"], label(r)): float(r["hit_ratio"]) for r in rows}
    width = 0.8 / len(names)
    fig, ax = plt.subplots(figsize=(11, 5))
    for i, name in enumerate(names):
        xs = [t + (i - (len(names) - 1) / 2) * width for t in range(len(traces))]
        ys = [values.get((trace, name), math.nan) for trace in traces]
        bars = ax.bar(xs, ys, width, label=name, color=color_of(name, names))
        ax.bar_label(bars, labels=[f"{y:.2f}" if not math.isnan(y) else "" for y in ys], fontsize=6, padding=1)
    ax.set_xticks(range(len(traces)), traces)
    ax.set_ylim(0, 1.2)   # headroom above 1 for the legend
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_ylabel("hit ratio")
    ax.set_title("Hit ratio, cache-aside, same traces\n" + subtitle, fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=5, loc="upper left")
    fig.tight_layout()
    fig.savefig(os.path.join(folder, f"hitratio-bars.{FORMAT}"), dpi=120)
    plt.close(fig)


def plot_live(folder, runs, subtitle):
    traces = list(dict.fromkeys(r["trace"] for r in runs))
    columns = min(3, len(traces))
    rows_needed = math.ceil(len(traces) / columns)
    fig, axes = plt.subplots(rows_needed, columns, figsize=(5 * columns, 3.6 * rows_needed), squeeze=False, sharey=True)
    names = list(dict.fromkeys(run_label(r) for r in runs))
    for ax, trace in zip(axes.flat, traces):
        for run in (r for r in runs if r["trace"] == trace):
            name = run_label(run)
            color = CASK_COLORS[names.index(name) % len(CASK_COLORS)]
            xs = [s["requests"] / 1000 for s in run["series"]]
            ax.plot(xs, [s["live_bytes"] / 1e6 for s in run["series"]], color=color, label=f"{name}: live data")
            ax.plot(xs, [s["disk_bytes"] / 1e6 for s in run["series"]], color=color, linestyle="--", linewidth=0.9,
                    label=f"{name}: disk")
        limit = runs[0]["byte_limit"] / 1e6
        ax.axhline(limit, color="black", linewidth=0.8, label="byte limit")
        ax.axhline(0.9 * limit, color="black", linewidth=0.8, linestyle=":", label="0.9 of the limit")
        ax.set_title(trace, fontsize=10)
        ax.set_xlabel("thousands of requests")
        ax.set_ylim(0, limit * 1.08)
        ax.grid(True, alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("MB")
    for ax in list(axes.flat)[len(traces):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower right", fontsize=8, bbox_to_anchor=(0.98, 0.04) if len(traces) % columns else None)
    fig.suptitle("Cask: live data and disk use over the trace\n" + subtitle, fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, f"hitratio-live.{FORMAT}"), dpi=120)
    plt.close(fig)


def run_label(run):
    rate = run.get("rate", 0)
    policy = run.get("policy", "default")
    name = "cask" if policy == "default" else f"cask-{policy}"
    return f'{name} ({"full speed" if not rate else f"{rate:g} MB/s"})'


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "Benchmarks/results/hitratio"
    rows = read_summary(folder)
    runs = read_cask(folder)
    first = runs[0] if runs else {"requests": 0, "value_size": 0, "byte_limit": 0}
    subtitle = (f'{first["requests"]:,} requests a trace, {first["value_size"]:,}-byte values, '
                f'byte limit {first["byte_limit"] / 1e6:g} MB')
    plot_bars(folder, rows, subtitle)
    if runs:
        plot_live(folder, runs, subtitle)
    print(f"wrote hitratio-bars.{FORMAT}{', hitratio-live.' + FORMAT if runs else ''} in {folder}")


if __name__ == "__main__":
    main()
