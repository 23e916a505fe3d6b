#!/usr/bin/env python3
"""Replays hit-ratio traces cache-aside against the peers Cask is measured beside (issue 43).

usage: python3 Benchmarks/hitratio/peers.py TRACE.u32 [TRACE.u32 ...] [--caches exact-lru,diskcache,theine]
           [--value-size 8192] [--byte-limit 50000000] [--warmup 0] [--scratch DIR]

A trace is a raw array of little-endian uint32 key ids (Benchmarks/hitratio/traces.py); key id
`i` is the key string "k%08d" % i, as on the Swift side (`cask-harness hitratio`). Its name is
the file name without `.u32`.

Every cache sees the same requests the same way, cache-aside: get the key; on a miss, set it to
a value of --value-size bytes. A request is counted (in `requests`, and in `hits` when the get
found the key) unless it is among the first --warmup fraction of the trace (default 0: every
request counts). The caches:

  exact-lru   an exact LRU simulated with an ordered dictionary: it holds items while the sum of
              len(key) + value_size over them stays at most --byte-limit, evicting the least
              recently got-or-set first.
  diskcache   python-diskcache 5.6.3, `Cache(tmpdir, size_limit=byte_limit,
              eviction_policy="least-recently-used")`, every value fresh random bytes
              (os.urandom). diskcache counts its size as SQLite's file size plus value files
              (`Cache.volume()`; values under 32 KiB, these, are stored inside SQLite), not
              key and value bytes.
  theine      theine 2.x (W-TinyLFU, in memory), `Cache(byte_limit // (len(key) + value_size),
              nolock=True)`: the same bytes in items, single-threaded. Keys are given as ints
              (Python's str hash is randomised per process; an int's is not) and the `random`
              module, which its lossy read buffer draws from, is seeded (--seed). Its Rust core
              still seeds itself from the OS, so its hit ratio varies by about 0.0005 from run
              to run.
  belady      a bound, not a cache: Belady's offline optimum for items of one size (it knows
              the future; on a miss it stores the key unless every held key and this one is
              asked for again sooner, and it evicts the held key asked for again last). No
              policy serves more hits. Needs every item to have the same size (they do here).
  best-static a bound for policies that count: the same bytes filled at once with the keys the
              whole trace asks for most, each first request a miss. A policy that knew every
              key's true popularity in advance, and no order, would serve this many hits on a
              trace with a fixed popularity (the Zipf traces); on the others it is no bound.

Output on stdout, one JSON line per cache and trace:
  {"cache", "trace", "hits", "requests", "hit_ratio", "live_bytes", "live_items", "seconds", ...}
`live_bytes` is the sum of len(key) + len(value) over the items the cache holds at the end (for
diskcache, read back; for theine, its item count times the item size). diskcache also reports
`live_value_bytes` and `disk_bytes` (`Cache.volume()`). Progress goes to stderr.
"""
import argparse
import array
import collections
import heapq
import json
import os
import random
import sys
import tempfile
import time
from collections import OrderedDict

CACHES = ("exact-lru", "diskcache", "theine", "belady", "best-static")


def key_string(key_id):
    return "k%08d" % key_id


def read_trace(path):
    ids = array.array("I")
    with open(path, "rb") as f:
        ids.frombytes(f.read())
    if sys.byteorder == "big":
        ids.byteswap()
    return ids


class Counter:
    """Hits and counted requests; requests before `warmup_requests` are not counted."""

    def __init__(self, name, total, warmup_requests):
        self.name, self.total, self.warmup = name, total, warmup_requests
        self.hits = self.requests = 0
        self.start = time.monotonic()
        self.next_report = 0
        # Redrawn in place on a terminal (every 5%); a line every 25% in a log.
        self.terminal = sys.stderr.isatty()
        self.step = max(1, total // (20 if self.terminal else 4))
        self.prefix = "\r" if self.terminal else ""

    def record(self, index, hit):
        if index >= self.warmup:
            self.requests += 1
            self.hits += hit
        if index >= self.next_report:
            if index > 0 or self.terminal:
                print(f"{self.prefix}  {self.name}: {100 * index // self.total:3d}% of {self.total:,} requests, "
                      f"hit ratio {self.hits / max(1, self.requests):.3f}, {time.monotonic() - self.start:.0f} s",
                      end="" if self.terminal else "\n", file=sys.stderr, flush=True)
            self.next_report += self.step

    def result(self, cache, trace, **extra):
        text = f"  {self.name}: done in {time.monotonic() - self.start:.1f} s, hit ratio {self.hits / max(1, self.requests):.4f}"
        print(f"{self.prefix}{text:<80}" if self.terminal else text, file=sys.stderr, flush=True)
        return {"cache": cache, "trace": trace, "hits": self.hits, "requests": self.requests,
                "hit_ratio": self.hits / self.requests if self.requests else 0.0,
                "seconds": round(time.monotonic() - self.start, 3), **extra}


def run_exact_lru(ids, trace, args, counter):
    lru, used = OrderedDict(), 0
    for i, key_id in enumerate(ids):
        key = key_string(key_id)
        hit = key in lru
        if hit:
            lru.move_to_end(key)
        else:
            size = len(key) + args.value_size
            if size <= args.byte_limit:
                while used + size > args.byte_limit:
                    _, evicted = lru.popitem(last=False)
                    used -= evicted
                lru[key] = size
                used += size
        counter.record(i, hit)
    return counter.result("exact-lru", trace, live_bytes=used, live_items=len(lru))


def run_diskcache(ids, trace, args, counter):
    import diskcache
    with tempfile.TemporaryDirectory(dir=args.scratch, prefix="hitratio-diskcache-") as folder:
        cache = diskcache.Cache(folder, size_limit=args.byte_limit, eviction_policy="least-recently-used")
        for i, key_id in enumerate(ids):
            key = key_string(key_id)
            hit = cache.get(key) is not None
            if not hit:
                cache.set(key, os.urandom(args.value_size))
            counter.record(i, hit)
        live_items = live_value_bytes = live_bytes = 0
        for key in list(cache.iterkeys()):
            value = cache.get(key)
            if value is not None:
                live_items += 1
                live_value_bytes += len(value)
                live_bytes += len(key) + len(value)
        disk_bytes = cache.volume()
        cache.close()
    return counter.result("diskcache", trace, live_bytes=live_bytes, live_items=live_items,
                          live_value_bytes=live_value_bytes, disk_bytes=disk_bytes, version=diskcache.__version__)


def run_theine(ids, trace, args, counter):
    import theine
    from importlib.metadata import version
    item_bytes = len(key_string(0)) + args.value_size
    items = args.byte_limit // item_bytes
    random.seed(args.seed)   # theine's read buffer picks its stripe with the random module
    cache = theine.Cache(items, nolock=True)
    value = b"\0" * args.value_size   # in memory; one shared value is enough to count hits
    for i, key_id in enumerate(ids):
        _, hit = cache.get(key_id)
        if not hit:
            cache.set(key_id, value)
        counter.record(i, hit)
    held = len(cache)
    return counter.result("theine", trace, live_bytes=held * item_bytes, live_items=held,
                          capacity_items=items, version=version("theine"))


def run_belady(ids, trace, args, counter):
    capacity = args.byte_limit // (len(key_string(0)) + args.value_size)
    never = len(ids)
    next_use, last = [never] * len(ids), {}
    for i in range(len(ids) - 1, -1, -1):
        next_use[i] = last.get(ids[i], never)
        last[ids[i]] = i
    held, heap = {}, []   # key id -> next use; max-heap of (-next use, key id), stale ones skipped
    for i, key_id in enumerate(ids):
        hit = key_id in held
        if not hit and len(held) >= capacity:
            while -heap[0][0] != held.get(heap[0][1]):
                heapq.heappop(heap)
            if -heap[0][0] <= next_use[i]:
                counter.record(i, False)
                continue   # every held key comes back sooner than this one: do not store it
            del held[heapq.heappop(heap)[1]]
        held[key_id] = next_use[i]
        heapq.heappush(heap, (-next_use[i], key_id))
        counter.record(i, hit)
    item_bytes = len(key_string(0)) + args.value_size
    return counter.result("belady", trace, live_bytes=len(held) * item_bytes, live_items=len(held))


def run_best_static(ids, trace, args, counter):
    capacity = args.byte_limit // (len(key_string(0)) + args.value_size)
    kept = {k for k, _ in collections.Counter(ids).most_common(capacity)}
    seen = set()
    for i, key_id in enumerate(ids):
        counter.record(i, key_id in kept and key_id in seen)
        seen.add(key_id)
    item_bytes = len(key_string(0)) + args.value_size
    return counter.result("best-static", trace, live_bytes=len(kept) * item_bytes, live_items=len(kept))


RUNNERS = {"exact-lru": run_exact_lru, "diskcache": run_diskcache, "theine": run_theine,
           "belady": run_belady, "best-static": run_best_static}


def main():
    parser = argparse.ArgumentParser(description="Cache-aside hit ratios of an exact LRU, python-diskcache and theine on traces.")
    parser.add_argument("traces", nargs="+", help="trace files (raw little-endian uint32 key ids)")
    parser.add_argument("--caches", default=",".join(CACHES), help=f"comma-separated, of {', '.join(CACHES)}")
    parser.add_argument("--value-size", type=int, default=8192)
    parser.add_argument("--byte-limit", type=int, default=50_000_000)
    parser.add_argument("--warmup", type=float, default=0.0, help="fraction of the requests not counted (0 ... <1)")
    parser.add_argument("--seed", type=int, default=43, help="seeds the random module, which theine's read buffer draws from")
    parser.add_argument("--scratch", default=None, help="where diskcache's folder goes (the default temporary folder)")
    args = parser.parse_args()
    caches = [c for c in args.caches.split(",") if c]
    unknown = [c for c in caches if c not in RUNNERS]
    if unknown or args.value_size < 1 or args.byte_limit < 1 or not 0 <= args.warmup < 1:
        sys.exit(f"peers.py: bad arguments (unknown caches: {unknown})" if unknown else "peers.py: bad arguments")
    for path in args.traces:
        ids = read_trace(path)
        trace = os.path.basename(path).removesuffix(".u32")
        warmup_requests = int(len(ids) * args.warmup)
        for cache in caches:
            counter = Counter(f"{cache} {trace}", len(ids), warmup_requests)
            result = RUNNERS[cache](ids, trace, args, counter)
            result.update(value_size=args.value_size, byte_limit=args.byte_limit, warmup=args.warmup)
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
