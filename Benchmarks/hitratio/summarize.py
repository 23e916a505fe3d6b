#!/usr/bin/env python3
"""Tabulates a hit-ratio run (tools/bench-hitratio.sh): summary.csv and summary.md in its folder.

usage: python3 Benchmarks/hitratio/summarize.py DIR [--command "the command that made it"]

Reads DIR/peers.jsonl (Benchmarks/hitratio/peers.py) and DIR/cask.jsonl (`cask-harness hitratio`,
one JSON line per run) and writes, one row per cache, rate and trace:

  summary.csv   cache, trace, rate, hit_ratio, ratio_to_exact_lru, live_bytes,
                live_fraction_of_limit, write_amplification, disk_bytes_max
  summary.md    the same as a markdown table with how it was made; also printed

`rate` is "full" (as fast as the cache takes the sets), a number (the sets held to that many MB/s)
or "-" (in memory: nothing written to pace). `ratio_to_exact_lru` is the hit ratio over the exact
LRU's on the same trace. `live_bytes` is key and value bytes held at the end.
`write_amplification` (Cask only) is (record bytes put + compaction output) / key and value bytes
set. `disk_bytes_max` (Cask only) is the most bytes of segment and hint files seen.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import subprocess

CACHE_ORDER = {"exact-lru": 0, "belady": 1, "best-static": 2, "diskcache": 3, "theine": 4, "cask": 5}
COLUMNS = ["cache", "trace", "rate", "hit_ratio", "ratio_to_exact_lru", "live_bytes", "live_fraction_of_limit",
           "write_amplification", "disk_bytes_max"]


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.startswith("{")]


def cache_name(run):
    policy = run.get("policy", "default")
    return run["cache"] if policy in ("default", None) else f'{run["cache"]}-{policy}'


def rate_label(run):
    if run["cache"] in ("exact-lru", "theine", "belady", "best-static"):
        return "-"
    rate = run.get("rate", 0)
    return "full" if not rate else f"{rate:g}"


def rows(runs, trace_order):
    """The table's rows: by trace (in the order first seen), then cache, then rate (full first)."""
    lru = {r["trace"]: r["hit_ratio"] for r in runs if r["cache"] == "exact-lru"}
    keyed = []
    for r in runs:
        base = lru.get(r["trace"])
        wa = r.get("write_amplification")
        row = {
            "cache": cache_name(r), "trace": r["trace"], "rate": rate_label(r),
            "hit_ratio": f'{r["hit_ratio"]:.4f}',
            "ratio_to_exact_lru": f'{r["hit_ratio"] / base:.3f}' if base else "",
            "live_bytes": r["live_bytes"],
            "live_fraction_of_limit": f'{r["live_bytes"] / r["byte_limit"]:.3f}',
            "write_amplification": f"{wa:.2f}" if wa is not None else "",
            "disk_bytes_max": r.get("disk_bytes_max", ""),
        }
        order = (trace_order[r["trace"]], CACHE_ORDER.get(r["cache"], 9), row["cache"], r.get("rate", 0) if r["cache"] == "cask" else 0)
        keyed.append((order, row))
    keyed.sort(key=lambda pair: pair[0])
    return [row for _, row in keyed]


def markdown(table, runs, command):
    first = runs[0]
    lines = [
        "# Hit ratio, cache-aside, same traces",
        "",
        f'{first["requests"]:,} requests a trace, {first["value_size"]:,}-byte random values, keys "k%08d", '
        f'byte limit {first["byte_limit"]:,} (exact LRU: key + value bytes; theine: that many bytes in items; '
        f'diskcache: `size_limit`; Cask: `limits.byteLimit` alone). Rate: MB/s of sets held; full = as fast as '
        f'the cache takes them; - = in memory.',
        "",
        f"Made by `{command}` on {datetime.date.today().isoformat()}, commit {git_commit()}, "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores.",
        "",
        "| trace | cache | rate | hit ratio | vs exact LRU | live MB | live / limit | write amp. | disk max MB |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in table:
        disk = f'{row["disk_bytes_max"] / 1e6:.1f}' if row["disk_bytes_max"] != "" else ""
        lines.append(f'| {row["trace"]} | {row["cache"]} | {row["rate"]} | {row["hit_ratio"]} | {row["ratio_to_exact_lru"]} | '
                     f'{row["live_bytes"] / 1e6:.1f} | {row["live_fraction_of_limit"]} | {row["write_amplification"]} | {disk} |')
    return "\n".join(lines) + "\n"


def git_commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    parser = argparse.ArgumentParser(description="Tabulate a hit-ratio run.")
    parser.add_argument("folder")
    parser.add_argument("--command", default="bash tools/bench-hitratio.sh")
    args = parser.parse_args()
    runs = read_lines(os.path.join(args.folder, "peers.jsonl")) + read_lines(os.path.join(args.folder, "cask.jsonl"))
    if not runs:
        raise SystemExit(f"summarize.py: no runs in {args.folder}")
    trace_order = {}
    for r in runs:
        trace_order.setdefault(r["trace"], len(trace_order))
    table = rows(runs, trace_order)
    with open(os.path.join(args.folder, "summary.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(table)
    text = markdown(table, runs, args.command)
    with open(os.path.join(args.folder, "summary.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
