#!/usr/bin/env python3
"""Plots the `cask-versus churn` results with matplotlib.

usage: python3 tools/plot_churn.py [Benchmarks/results/churn] [svg|png]

Reads churn-throughput.csv, churn-latency.csv, churn-disk.csv and churn-summary.csv from that
folder and writes next to them (SVG unless png is asked for):
  churn-throughput.svg  puts per second in each window (100 ms by default) over the churn, per engine
  churn-latency.svg     the put latency tail: fraction of puts slower than x (CCDF), log-log
  churn-disk.svg        disk use of each store's directory over the churn, with the byte limit
Needs matplotlib (`python3 -m pip install matplotlib`).
"""
import csv
import os
import sys
from collections import defaultdict

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_churn.py needs matplotlib: python3 -m pip install matplotlib")

FORMAT = sys.argv[2] if len(sys.argv) > 2 else "svg"
COLORS = {"cask": "#d62728", "cask-limit": "#8c1a1a", "append": "#7f7f7f", "leveldb": "#1f77b4",
          "rocksdb": "#ff7f0e", "lmdb": "#2ca02c", "sqlite": "#9467bd"}


def read_series(path, x_field, y_field):
    """{engine: ([x], [y])} from a CSV with an engine column, in file order."""
    series = defaultdict(lambda: ([], []))
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            xs, ys = series[row["engine"]]
            xs.append(float(row[x_field]))
            ys.append(float(row[y_field]))
    return series


def read_summary(path):
    with open(path, newline="") as f:
        return {row["engine"]: row for row in csv.DictReader(f)}


def subtitle(summary):
    row = next(iter(summary.values()))
    return f'{int(row["keys"]):,} keys filled, {int(row["puts"]):,} random overwrites, 16 B keys, 100 B values, no sync, one thread'


def plot_throughput(folder, summary):
    series = read_series(os.path.join(folder, "churn-throughput.csv"), "t_seconds", "puts")
    fig, ax = plt.subplots(figsize=(10, 5))
    for engine, (t, puts) in series.items():
        window = float(summary[engine]["window_ms"]) / 1000 if engine in summary else 0.1
        # The last window is partial: left out. Each window drawn flat from its start to its end,
        # so that a stall shows as a drop to zero.
        if len(t) > 1:
            t, puts = t[:-1], puts[:-1]
        starts = [x - window for x in t] + [t[-1]]
        rate = [p / window for p in puts]
        ax.step(starts, rate + [rate[-1]], where="post", label=engine, color=COLORS.get(engine), linewidth=1)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("seconds since the churn began")
    ax.set_ylabel("puts per second (per window)")
    ax.set_title("Throughput over time\n" + subtitle(summary), fontsize=10)
    save(fig, ax, folder, "throughput", minor_grid=True)


def save(fig, ax, folder, name, minor_grid=False):
    """Grid, legend and layout, then writes churn-NAME.FORMAT into `folder`."""
    ax.grid(True, which="both" if minor_grid else "major", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(folder, f"churn-{name}.{FORMAT}"), dpi=120)
    plt.close(fig)


def plot_latency(folder, summary):
    series = read_series(os.path.join(folder, "churn-latency.csv"), "percentile", "latency_ns")
    fig, ax = plt.subplots(figsize=(8, 6))
    for engine, (percentiles, ns) in series.items():
        puts = int(summary[engine]["puts"]) if engine in summary else 0
        floor = 1 / puts if puts else 1e-9
        # Fraction of puts slower than each point; the maximum is drawn at one put in `puts`.
        ccdf = [max(floor, 1 - p / 100) for p in percentiles]
        ax.step([x / 1000 for x in ns], ccdf, where="post", label=engine, color=COLORS.get(engine))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("put latency (µs, log scale)")
    ax.set_ylabel("fraction of puts slower (log scale)")
    ax.set_title("Put latency distribution (CCDF)\n" + subtitle(summary), fontsize=10)
    save(fig, ax, folder, "latency", minor_grid=True)


def plot_disk(folder, summary):
    series = read_series(os.path.join(folder, "churn-disk.csv"), "t_seconds", "disk_bytes")
    fig, ax = plt.subplots(figsize=(10, 5))
    for engine, (t, disk) in series.items():
        ax.plot(t, [d / 1048576 for d in disk], label=engine, color=COLORS.get(engine), linewidth=1)
    limits = {row["byte_limit"] for row in summary.values() if row["byte_limit"]}
    for limit in limits:
        ax.axhline(int(limit) / 1048576, color="black", linestyle="--", linewidth=0.8, label=f"byte limit {int(limit) >> 20} MiB")
    ax.set_xlabel("seconds since the churn began")
    ax.set_ylabel("disk use of the store's directory (MiB)")
    ax.set_title("Disk use over time\n" + subtitle(summary), fontsize=10)
    save(fig, ax, folder, "disk")


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "Benchmarks/results/churn"
    summary = read_summary(os.path.join(folder, "churn-summary.csv"))
    plot_throughput(folder, summary)
    plot_latency(folder, summary)
    plot_disk(folder, summary)
    print(f"wrote churn-throughput.{FORMAT}, churn-latency.{FORMAT}, churn-disk.{FORMAT} in {folder}")


if __name__ == "__main__":
    main()
