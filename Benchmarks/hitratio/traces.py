#!/usr/bin/env python3
"""Writes the seeded request traces of the hit-ratio benchmark (issue 43).

usage: python3 Benchmarks/hitratio/traces.py OUT_DIR [--seed 43] [--requests 400000]
                                             [--keys 20000] [--only NAME,NAME]

File format: OUT_DIR/NAME.u32 is a raw array of little-endian unsigned 32-bit integers, one key id
per request, in request order, nothing else (no header; the request count is the file size / 4).
Every replayer turns a key id `i` into the key string "k%08d" % i (9 bytes: "k00012345"), so that
the Swift and the Python side count the same key bytes. OUT_DIR/traces.json lists each trace
with its parameters, request count, distinct keys and SHA-256.

Traces (defaults; --requests and --keys scale them):
  zipf-0.6, zipf-0.8, zipf-0.99
      400,000 requests drawn from a Zipf distribution of that exponent over 20,000 keys:
      P(rank r) proportional to 1 / r^s, r = 1 ... 20,000. Ranks are mapped to key ids 0 ... 19,999
      through a seeded permutation (popularity is not in key order).
  loop
      The pattern where LRU gets nothing from the part of the workload that repeats most
      regularly: each request is, with probability 1/2, the next key of a loop over 7,000 keys
      (ids 0 ... 6,999, cycled in order; larger than the ~6,100 items of 8 KiB a 50 MB limit
      holds), and otherwise a Zipf(0.8) draw over 20,000 other keys (ids 7,000 ... 26,999). A
      loop key comes back every ~14,000 requests, after more distinct keys than the cache holds,
      so LRU evicts each one just before its reuse; a cache that keeps a fixed part of the loop
      (or prefers it to the Zipf tail) hits on that part every time round.
  scan
      Zipf(0.8) over 20,000 keys (as zipf-0.8), with a sequential scan inserted after every
      16,000 Zipf requests: 4,000 keys that appear once and never again (ids 1,000,000 upward,
      in order), about two thirds of what the cache holds. Each scan pushes that much of the hot
      set out of an LRU; a frequency-aware cache does not admit the scanned keys. 20% of the
      requests are scan requests (never hits for anyone).
  shift
      The pattern a recency window exists for (W-TinyLFU's "window"): Zipf(0.8) over 20,000 keys
      whose popularity moves to 20,000 fresh keys every 50,000 requests (phase p draws ids
      p * 20,000 ... p * 20,000 + 19,999, each phase with its own rank order). The keys that were
      hot keep their counts in a frequency sketch until it ages them; new hot keys must win
      their place against them, while an LRU forgets the old phase at once.

Deterministic from the seed: each trace draws from its own `random.Random(seed + k)`, k = 1 ... 6
in the order above (Mersenne Twister: `random()` and `shuffle` give the same sequence on every
CPython 3 version since 3.2). Pure Python, no numpy (about 2 s for all six traces).
"""
import argparse
import bisect
import hashlib
import itertools
import json
import os
import random
import struct
import sys

LOOP_KEYS = 7_000
LOOP_SHARE = 0.5
SCAN_EVERY = 16_000
SCAN_LENGTH = 4_000
SCAN_FIRST_ID = 1_000_000
SHIFT_EVERY = 50_000


class Zipf:
    """Draws key ids from a Zipf(`exponent`) distribution over `keys` keys, ids from `first_id`."""

    def __init__(self, rng, exponent, keys, first_id=0):
        weights = [1.0 / (r ** exponent) for r in range(1, keys + 1)]
        self.cumulative = list(itertools.accumulate(weights))
        self.total = self.cumulative[-1]
        self.ids = list(range(first_id, first_id + keys))
        rng.shuffle(self.ids)   # rank -> key id
        self.rng = rng

    def draw(self):
        rank = bisect.bisect_left(self.cumulative, self.rng.random() * self.total)
        return self.ids[min(rank, len(self.ids) - 1)]


def zipf_trace(seed, exponent, requests, keys):
    rng = random.Random(seed)
    zipf = Zipf(rng, exponent, keys)
    return [zipf.draw() for _ in range(requests)]


def loop_trace(seed, requests, keys):
    rng = random.Random(seed)
    zipf = Zipf(rng, 0.8, keys, first_id=LOOP_KEYS)
    out, position = [], 0
    for _ in range(requests):
        if rng.random() < LOOP_SHARE:
            out.append(position)
            position = (position + 1) % LOOP_KEYS
        else:
            out.append(zipf.draw())
    return out


def scan_trace(seed, requests, keys):
    rng = random.Random(seed)
    zipf = Zipf(rng, 0.8, keys)
    out, next_scan_id, since_scan = [], SCAN_FIRST_ID, 0
    while len(out) < requests:
        if since_scan == SCAN_EVERY:
            length = min(SCAN_LENGTH, requests - len(out))
            out.extend(range(next_scan_id, next_scan_id + length))
            next_scan_id += length
            since_scan = 0
        else:
            out.append(zipf.draw())
            since_scan += 1
    return out


def shift_trace(seed, requests, keys):
    rng = random.Random(seed)
    out, phase = [], 0
    while len(out) < requests:
        zipf = Zipf(rng, 0.8, keys, first_id=phase * keys)
        out.extend(zipf.draw() for _ in range(min(SHIFT_EVERY, requests - len(out))))
        phase += 1
    return out


def traces(seed, requests, keys):
    """{name: (parameters, generator of the key id list)}; each trace has its own seed."""
    return {
        "zipf-0.6": ({"kind": "zipf", "exponent": 0.6, "keys": keys}, lambda: zipf_trace(seed + 1, 0.6, requests, keys)),
        "zipf-0.8": ({"kind": "zipf", "exponent": 0.8, "keys": keys}, lambda: zipf_trace(seed + 2, 0.8, requests, keys)),
        "zipf-0.99": ({"kind": "zipf", "exponent": 0.99, "keys": keys}, lambda: zipf_trace(seed + 3, 0.99, requests, keys)),
        "loop": ({"kind": "loop", "loop_keys": LOOP_KEYS, "loop_share": LOOP_SHARE, "zipf_exponent": 0.8, "zipf_keys": keys},
                 lambda: loop_trace(seed + 4, requests, keys)),
        "scan": ({"kind": "scan", "zipf_exponent": 0.8, "zipf_keys": keys, "scan_every": SCAN_EVERY,
                  "scan_length": SCAN_LENGTH, "scan_first_id": SCAN_FIRST_ID},
                 lambda: scan_trace(seed + 5, requests, keys)),
        "shift": ({"kind": "shift", "zipf_exponent": 0.8, "zipf_keys": keys, "shift_every": SHIFT_EVERY},
                  lambda: shift_trace(seed + 6, requests, keys)),
    }


def write_trace(path, ids):
    data = struct.pack(f"<{len(ids)}I", *ids)
    with open(path, "wb") as f:
        f.write(data)
    return hashlib.sha256(data).hexdigest()


def main():
    parser = argparse.ArgumentParser(description="Write the hit-ratio benchmark's traces (raw little-endian uint32 key ids).")
    parser.add_argument("out", help="folder to write NAME.u32 and traces.json into")
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--requests", type=int, default=400_000)
    parser.add_argument("--keys", type=int, default=20_000, help="keys of each Zipf distribution")
    parser.add_argument("--only", default="", help="comma-separated trace names (default: all)")
    args = parser.parse_args()
    if args.requests < 1 or args.keys < 1:
        sys.exit("traces.py: --requests and --keys must be at least 1")
    os.makedirs(args.out, exist_ok=True)
    wanted = [n for n in args.only.split(",") if n]
    manifest = []
    for name, (params, make) in traces(args.seed, args.requests, args.keys).items():
        if wanted and name not in wanted:
            continue
        ids = make()
        digest = write_trace(os.path.join(args.out, f"{name}.u32"), ids)
        entry = {"name": name, "file": f"{name}.u32", "seed": args.seed, "requests": len(ids),
                 "distinct_keys": len(set(ids)), "sha256": digest, **params}
        manifest.append(entry)
        print(f"traces: {name}: {len(ids):,} requests, {entry['distinct_keys']:,} distinct keys", file=sys.stderr)
    with open(os.path.join(args.out, "traces.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
