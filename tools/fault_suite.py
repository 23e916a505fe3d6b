#!/usr/bin/env python3
"""Outside-in fault suite: real failed syscalls must never lose an acknowledged write.

Runs the `cask` tool under libfiu (`fiu-run -x`, Debian package fiu-utils), which makes a
fraction of one kind of libc call fail (EIO, ENOSPC; ENOMEM for mmap) or come back short, and
checks after every step, with no fault, that the store still holds exactly what the commands
acknowledged.

How it runs
  Many short sequences (40 to 60 steps), each in a fresh temporary store (deleted afterwards).
  A sequence first fills the store with no fault: 40 keys, values from 1 byte to 40 KiB, half of
  them compressible, a few pinned. Then each step runs one command under the sequence's single
  fault point (sequence n uses point n mod 14, see POINTS), with a probability drawn
  log-uniformly from 0.02 to 0.5 and an errno drawn from those that make sense for the call: put
  (new key or overwrite, some with --pin), rm, rm --prefix, rm --tag, pin, unpin, compact, trim --count/--size, backup
  (into a new folder), get, ls --json, verify, stats --json (a clean open). Faults apply to that
  command only, never to the checks. Sequences run on --jobs processes (default 2); --soak runs
  50,000 steps instead of 2,000.

The model
  For every key the set of states it may be in: absent, or one value with its pinned flag.
  Every value written in a sequence has its own length, so a length names a version.
  - put exit 0: exactly the new value. rm exit 0 or 1: absent. rm --prefix exit 0 or 1: every
    key under the prefix absent (exit 1 while one is certainly present is a wrong answer).
    pin/unpin exit 0: the value(s) the key may hold, with that flag (exit 1: no change).
    rm --tag (rmtag) exit 0 or 1: every key holding a value stored as a cache entry with that tag
    (cache-engine puts store a third of their values so, tagged t0, t1 or t2) absent.
  - A failed command (any other status) may or may not have taken effect: the new state joins
    the allowed ones until a later acknowledged command settles the key.
  - trim (whatever its status) may remove any unpinned key. A key certainly present and certainly
    pinned must survive a --count C when no more than C keys can be pinned, and a --size S when S
    exceeds twice the records all possibly pinned keys and all pin records can take (plus 4 KiB):
    "size and count trims take unpinned items first" (LimitsAndEviction.md).
  - compact, backup, get, ls, verify and stats change nothing.

The checks, after every step, with no fault
  The independent reader (tools/caskdump.py, imported) reads every live key's value and pinned
  flag; `cask ls --json` lists every live key with its length and pinned flag; `cask get` reads
  the step's key, one sampled key, and at the end of a sequence every key. A defect is:
    lost             a value the model says is certainly there is absent
    resurrected      a removed key, or an older value, is back
    wrong-value      a value that is none of the allowed ones (or a key never written)
    pin              the right value with a pinned flag the model does not allow
    readers-disagree caskdump and cask see different things
    wrong-answer     a faulted command answered wrongly: get/rm/pin/unpin said "missing" (exit 1)
                     for a key certainly present; get, ls or stats (its item count) exited 0 with
                     what the model does not allow; verify reported damage (exit 1) that a
                     fault-free verify does not find
    trim-limit       a trim --count C that exited 0 left more than C keys
    damage           caskdump finds damaged bytes outside the torn tail of the newest log segment
    unusable         a fault-free check (ls, get, the reader) fails on the store, or the
                     fault-free fill fails
    crash, hang      a signal or trap (the program runs with SWIFT_BACKTRACE=enable=no), or no exit
                     within --timeout seconds
  A fault-free open that repairs what a faulted step left (cutting a torn tail) is fine: the model
  is the judge. After a defect the model takes what the readers found for the keys involved, so
  each loss is reported once, and the sequence goes on. A successful backup is checked against the
  model like the store. The last line, `fault suite: N passed, M failed`, counts steps (M: steps
  with at least one defect); the exit status is 1 when M > 0.

Messages
  A failed command's standard error must hold exactly one `cask: ...` line that names a path (or
  standard output) and an errno as "(errno N)", besides logger warnings and progress lines; never
  Foundation's "The operation could not be completed" or a stack trace. Violations are "message
  defects", listed but failing the run only with --strict-messages. Under posix/io/rw/write a
  missing line is not counted (writing the message itself may have been the failed call).

Reproducing
  The seed fixes every choice: steps, keys, values, probabilities, errnos (each sequence draws
  from its own generator, so `--sequence N` replays sequence N alone). libfiu's own randomness is
  NOT seeded (it draws from the clock): which calls fail differs from run to run, so a finding may
  need several runs of its sequence (`--sequence N --repeat 20`). `--keep DIR` saves, for each
  defect, the store as it was before the step and the command, to rerun that one step by hand.

usage: python3 tools/fault_suite.py [--seed S] [--ops N | --soak] [--cask PATH] [--points a,b]
                                    [--jobs J] [--verbose] [--strict-messages] [--keep DIR]
Needs Python 3.9+, the `lz4` package (for caskdump.py) and fiu-run.
"""
import argparse
import concurrent.futures
import functools
import json
import math
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOOLS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
import caskdump  # noqa: E402

# The reader checks every record's CRC32C in pure Python on every read of the store; sealed
# segments do not change between steps, so remember the checksums of the bytes it has seen.
caskdump.crc32c = functools.lru_cache(maxsize=4096)(caskdump.crc32c)

EIO, ENOMEM, ENOSPC = 5, 12, 28
# (fault point, errnos that make sense for the call; empty: a short read or write, no errno).
# Sequence n uses point n mod 14; a default run has about 40 sequences, so the first points of
# the list get one sequence more: the read points first, and last those this binary never fails
# (it ignores close errors, maps nothing it cannot also pread, and truncates rarely).
POINTS = [
    ("posix/io/rw/pread", (EIO,)),
    ("posix/io/rw/read", (EIO,)),
    ("posix/io/rw/pread/reduce", ()),
    ("posix/io/rw/write", (EIO, ENOSPC)),
    ("posix/io/rw/write/reduce", ()),
    ("posix/io/rw/pwrite", (EIO, ENOSPC)),
    ("posix/io/sync/fsync", (EIO, ENOSPC)),
    ("posix/io/sync/fdatasync", (EIO, ENOSPC)),
    ("posix/io/oc/open", (EIO, ENOSPC)),
    ("posix/io/dir/rename", (EIO, ENOSPC)),
    ("posix/io/dir/unlink", (EIO,)),
    ("posix/io/rw/ftruncate", (EIO,)),
    ("posix/io/oc/close", (EIO, ENOSPC)),
    ("posix/mm/mmap", (ENOMEM,)),
]
DEFAULT_SEED = 20261125
DEFAULT_OPS = 2000
SOAK_OPS = 50000
FILL_KEYS = 40
SPARE_KEYS = 12
# Verbs whose exit status 1 is the documented "the answer is no".
CACHE_OPS = {"put", "rm", "get", "pin", "unpin", "compact", "rmtag"}
TAGS = ("t0", "t1", "t2")


def fnv1a(data):
    """FNV-1a, 64 bits, as 16 hex digits (cask-harness cache-step computes the same)."""
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


ANSWER_NO = {"get", "rm", "rmprefix", "rmtag", "pin", "unpin", "verify"}
OPS = [("put", 30), ("rm", 10), ("rmprefix", 4), ("rmtag", 4), ("pin", 8), ("unpin", 5), ("compact", 7), ("trim", 6),
       ("backup", 5), ("get", 10), ("ls", 7), ("verify", 6), ("stats", 6)]
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\S+ (trace|debug|info|notice|warning|error|critical) ")
PROGRESS_LINE = re.compile(r"^[a-z]+: \d+%$")
BAD_TEXT = ("The operation could not be completed", "Error Domain=", "NSCocoaErrorDomain",
            "Fatal error", "Stack dump", "Current stack trace", "Backtrace", "Thread 0 crashed")


class HarnessError(Exception):
    pass


def fmt_state(s):
    if s is None:
        return "absent"
    vid, pinned = s
    name = f"value#{vid}" if isinstance(vid, int) else f"foreign {vid[1]} B value"
    return name + (" pinned" if pinned else "")


def vlen(vid):
    return vid if isinstance(vid, int) else vid[1]


def fmt_states(states):
    return "{" + ", ".join(sorted(fmt_state(s) for s in states)) + "}"


class Sequence:
    """One store, one fault point, a fixed list of seeded steps, and the model."""

    def __init__(self, opts, index, nsteps, work):
        self.opts = opts
        self.index = index
        self.nsteps = nsteps
        self.rng = random.Random(f"{opts.seed}/{index}")
        self.check_rng = random.Random(f"{opts.seed}/{index}/checks")
        self.point, self.errnos = opts.points[index % len(opts.points)]
        self.work = work
        self.store = os.path.join(work, "store")
        self.env = dict(os.environ, SWIFT_BACKTRACE="enable=no")
        for k in ("LD_PRELOAD", "FIU_ENABLE", "FIU_CTRL_FIFO", "CASK_KEY_FILE"):
            self.env.pop(k, None)
        if opts.key_file:
            self.env["CASK_KEY_FILE"] = opts.key_file
        self.values = {}          # length -> bytes (every value of the sequence has its own length)
        self.value_tag = {}       # length -> the tag its cache entry lists (cache engine puts), or None
        self.model = {}           # key -> frozenset of states: None or (length, pinned)
        self.history = {}         # key -> lengths ever written to it
        self.keys = self.make_keys()
        # The library engine: CaskCache (memory in front of disk) in a cask-harness process.
        self.cache_engine = opts.engine == "cache" or (opts.engine == "both" and index % 3 == 2)
        self.out = {"index": index, "point": self.point, "steps": 0, "failed_cmds": 0,
                    "defect_steps": 0, "defects": [], "messages": [], "log": [], "unverifiable": 0,
                    "ops": {}}

    # --- inputs -------------------------------------------------------------------------
    def make_keys(self):
        keys = []
        for i in range(FILL_KEYS + SPARE_KEYS):
            k = f"k{i:02d}"
            if i % 7 == 3:
                k += ":" + "".join(self.rng.choice("abcdefghij/._-") for _ in range(self.rng.randint(20, 180)))
            elif i % 11 == 5:
                k += " clé ключ"
            keys.append(k)
        self.rng.shuffle(keys)
        return keys

    def new_value(self):
        r = self.rng.random()
        if r < 0.55:
            n = self.rng.randint(1, 700)
        elif r < 0.85:
            n = self.rng.randint(700, 6000)
        else:
            n = self.rng.randint(8192, 40000)
        while n in self.values:
            n += 1
        if self.rng.random() < 0.5:
            data = self.rng.randbytes(n)
        else:
            words = [self.rng.randbytes(self.rng.randint(3, 12)).hex().encode() for _ in range(6)]
            parts, size = [], 0
            while size < n:
                w = self.rng.choice(words) + b" "
                parts.append(w)
                size += len(w)
            data = b"".join(parts)[:n]
        self.values[n] = data
        return n

    # --- running ------------------------------------------------------------------------
    def run(self, argv, faulted=False, fault=None):
        if faulted:
            spec = f"enable_random name={fault['point']},probability={fault['p']}"
            if fault["errno"] is not None:
                spec += f",failinfo={fault['errno']}"
            argv = ["fiu-run", "-x", "-f", "", "-c", spec] + argv
        # Its own process group, so that a hung command and anything it started can be killed.
        p = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = p.communicate(timeout=self.opts.timeout)
            return {"argv": argv, "rc": p.returncode, "out": out, "err": err, "hang": False}
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = p.communicate()
            return {"argv": argv, "rc": None, "out": out, "err": err, "hang": True}

    def cask(self, *args):
        return [self.opts.cask] + [str(a) for a in args]

    def defect(self, kind, step, text, cmd=None, extra=None):
        d = {"kind": kind, "sequence": self.index, "step": step, "point": self.point, "text": text}
        if cmd is not None:
            d["command"] = "SWIFT_BACKTRACE=enable=no " + shlex.join(cmd["argv"])
            d["rc"] = cmd["rc"]
            d["stderr"] = cmd["err"].decode("utf-8", "replace").strip()[:800]
        if extra:
            d.update(extra)
        self.step_defects.append(d)

    # --- observation --------------------------------------------------------------------
    def state_of_bytes(self, value, pinned):
        n = len(value)
        if n in self.values and self.values[n] == value:
            return (n, pinned)
        return (("foreign", n, caskdump.crc32c(value)), pinned)

    def state_of_length(self, n, pinned):
        return (n, pinned) if n in self.values else (("foreign", n, None), pinned)

    def dump(self, store):
        """caskdump's view: key -> (value bytes, pinned, stored length), and its problems."""
        newest, bound, problems = caskdump.read_store(store, self.opts.keys)
        items = {}
        for key, (seq, info) in newest.items():
            if info["kind"] == 2 or seq < bound:
                continue
            pinned = bool(info["flags"] & 2)
            if info["expiry"] and time.time() * 1000 >= info["expiry"] and not pinned:
                continue
            found = caskdump.value_of(info, self.opts.keys)   # (value, freshUntil); the CLI writes no cache entries
            if found is None:
                problems.append(f"{info['segment']:010d}.cask:{info['offset']}: record of {key!r} fails its checks")
                continue
            value = found[0]
            items[key.decode("utf-8", "replace")] = (value, pinned, info["stored_length"])
        return items, problems

    def check(self, step, store, what, touched=(), all_gets=False, trim_count=None, cmd=None):
        """Compares both readers with the model; returns keys whose check found a defect."""
        bad = set()
        try:
            ditems, problems = self.dump(store)
        except (Exception, SystemExit) as e:  # noqa: BLE001 - any reader failure is a finding
            self.defect("unusable", step, f"{what}: caskdump fails to read the store: {e!r}", cmd)
            return set(), {}
        for p in problems:
            self.defect("damage", step, f"{what}: caskdump: {p}", cmd)
        ls = self.run(self.cask("ls", store, "--json"))
        citems = None
        if ls["hang"] or ls["rc"] != 0:
            self.defect("hang" if ls["hang"] else ("crash" if ls["rc"] < 0 else "unusable"), step,
                        f"{what}: fault-free `cask ls --json` exit {ls['rc']}: "
                        f"{ls['err'].decode('utf-8', 'replace').strip()[:300]}", cmd)
        else:
            try:
                citems = {o["key"]: o for o in json.loads(ls["out"] or b"[]")}
            except ValueError as e:
                self.defect("unusable", step, f"{what}: fault-free `cask ls --json` printed unparsable JSON ({e})", cmd)
        if trim_count is not None and len(ditems) > trim_count:
            self.defect("trim-limit", step, f"{what}: trim --count {trim_count} exited 0 and left {len(ditems)} keys", cmd)
        names = set(self.keys) | set(ditems) | set(citems or {})
        found = {}
        for k in sorted(names):
            allowed = self.model.get(k, frozenset([None]))
            d = None
            if k in ditems:
                d = self.state_of_bytes(ditems[k][0], ditems[k][1])
            c = d
            if citems is not None:
                c = None
                if k in citems:
                    c = self.state_of_length(citems[k]["size"], bool(citems[k]["pinned"]))
            found[k] = (d, c)
            if d not in allowed or c not in allowed:
                both = d == c
                s = d if d not in allowed else c
                kind = self.classify(k, allowed, s)
                who = "both readers" if both else ("caskdump" if d not in allowed else "cask ls")
                self.defect(kind, step, f"{what}: key {k!r}: model allows {fmt_states(allowed)}; "
                                        f"caskdump: {fmt_state(d)}; cask: {fmt_state(c)} ({who})", cmd)
                bad.add(k)
            elif d != c:
                self.defect("readers-disagree", step, f"{what}: key {k!r}: caskdump: {fmt_state(d)}; "
                                                      f"cask ls: {fmt_state(c)}", cmd)
                bad.add(k)
            elif k in ditems and citems is not None and ditems[k][2] != citems[k]["storedSize"]:
                self.defect("readers-disagree", step, f"{what}: key {k!r}: stored size {ditems[k][2]} "
                                                      f"(caskdump) vs {citems[k]['storedSize']} (cask ls)", cmd)
                bad.add(k)
        # cask get: the step's key and one sampled key, or every key.
        if all_gets:
            gets = list(self.keys)
        else:
            gets = [k for k in touched if k is not None] + [self.check_rng.choice(self.keys)]
        for k in dict.fromkeys(gets):
            if k in bad:
                continue
            g = self.run(self.cask("get", store, k))
            if g["hang"] or g["rc"] not in (0, 1):
                self.defect("hang" if g["hang"] else ("crash" if g["rc"] < 0 else "unusable"), step,
                            f"{what}: fault-free `cask get {k}` exit {g['rc']}: "
                            f"{g['err'].decode('utf-8', 'replace').strip()[:300]}", cmd)
                bad.add(k)
                continue
            d = found.get(k, (None, None))[0]
            if g["rc"] == 1 and d is not None:
                self.defect("readers-disagree", step, f"{what}: key {k!r}: caskdump: {fmt_state(d)}; cask get: missing", cmd)
                bad.add(k)
            elif g["rc"] == 0 and (d is None or k not in ditems or ditems[k][0] != g["out"]):
                self.defect("readers-disagree", step, f"{what}: key {k!r}: caskdump: {fmt_state(d)}; "
                                                      f"cask get printed {len(g['out'])} bytes that differ", cmd)
                bad.add(k)
        return bad, found

    def classify(self, key, allowed, s):
        if s is None:
            return "lost"
        vid, pinned = s
        if any(a is not None and a[0] == vid for a in allowed):
            return "pin"
        if isinstance(vid, int) and vid in self.history.get(key, ()):
            return "resurrected"
        return "wrong-value"

    # --- the model ----------------------------------------------------------------------
    def allowed(self, k):
        return self.model.get(k, frozenset([None]))

    def trim_protected(self, mode, amount):
        """Keys a trim must not remove: certainly present and pinned, when the target allows."""
        maybe_pinned = [k for k in self.keys if any(s is not None and s[1] for s in self.allowed(k))]
        if mode == "count":
            ok = len(maybe_pinned) <= amount
        else:
            need = sum(40 + len(k.encode()) + max(vlen(s[0]) for s in self.allowed(k) if s is not None and s[1])
                       for k in maybe_pinned)
            need += sum(40 + len(k.encode()) for k in self.keys)
            ok = 2 * need + 4096 <= amount
        if not ok:
            return set()
        return {k for k in self.keys
                if None not in self.allowed(k) and all(s[1] for s in self.allowed(k))}

    # --- the sequence -------------------------------------------------------------------
    def fill(self):
        self.step_defects = []
        for k in self.keys[:FILL_KEYS]:
            n = self.new_value()
            pin = self.rng.random() < 0.15
            path = os.path.join(self.work, "value")
            with open(path, "wb") as f:
                f.write(self.values[n])
            argv = self.cask("put", self.store, k, "--file", path) + (["--pin"] if pin else [])
            r = self.run(argv)
            if r["rc"] != 0:
                self.defect("unusable" if not r["hang"] else "hang", 0,
                            f"fault-free fill: put {k!r} exit {r['rc']}", r)
                return False
            self.model[k] = frozenset([(n, pin)])
            self.history.setdefault(k, set()).add(n)
        bad, _ = self.check(0, self.store, "after the fill")
        return not self.step_defects

    def choose_step(self):
        """Every draw happens whatever the outcomes, so a seed fixes the whole sequence."""
        r = self.rng
        op = r.choices([o for o, _ in OPS], weights=[w for _, w in OPS])[0]
        # Log-uniform from 0.02 to 0.5: most steps see a few failed calls (and many commands
        # still succeed, leaving acknowledged writes to protect), some see a storm.
        step = {"op": op, "key": r.choice(self.keys), "p": round(math.exp(r.uniform(math.log(0.02), math.log(0.5))), 3),
                "errno": r.choice(self.errnos) if self.errnos else None}
        # A put through the cache stores some values as cache entries tagged with a tag; rmtag
        # removes one tag (through the cache, or `cask rm --tag`).
        step["tag"] = r.choice(TAGS) if r.random() < 0.35 else None
        if op == "rmtag":
            step["tag"] = r.choice(TAGS)
        if op == "put":
            step["value"] = self.new_value()
            step["pin"] = r.random() < 0.15 and step["tag"] is None
        elif op == "rmprefix":
            # "k0" ... "k5" reach about ten keys each; a whole key reaches itself (and any key it begins).
            step["prefix"] = step["key"][:2] if r.random() < 0.7 else step["key"]
        elif op == "trim":
            if r.random() < 0.5:
                step["mode"], step["amount"] = "count", r.randint(3, 50)
            else:
                step["mode"], step["amount"] = "size", r.randint(8 << 10, 400 << 10)
        return step

    def run_sequence(self):
        os.makedirs(self.work, exist_ok=True)
        if not self.fill():
            self.out["defects"].extend(self.step_defects)
            self.out["steps"] += 1
            self.out["defect_steps"] += 1
            self.out["log"].append(f"sequence {self.index}: fill failed")
            return self.out
        for i in range(1, self.nsteps + 1):
            self.step_defects = []
            st = self.choose_step()
            self.one_step(i, st)
            self.out["steps"] += 1
            if self.step_defects:
                self.out["defect_steps"] += 1
                self.out["defects"].extend(self.step_defects)
        return self.out

    def one_step(self, i, st):
        op, k = st["op"], st["key"]
        fault = {"point": self.point, "p": st["p"], "errno": st["errno"]}
        before = self.allowed(k)
        touched = [k]
        if op == "put":
            path = os.path.join(self.work, "value")
            with open(path, "wb") as f:
                f.write(self.values[st["value"]])
            argv = self.cask("put", self.store, k, "--file", path) + (["--pin"] if st["pin"] else [])
        elif op in ("rm", "pin", "unpin", "get"):
            argv = self.cask(op, self.store, k)
        elif op == "rmprefix":
            argv = self.cask("rm", self.store, st["prefix"], "--prefix")
            touched = [key for key in self.keys if key.startswith(st["prefix"])]
        elif op == "rmtag":
            argv = self.cask("rm", self.store, st["tag"], "--tag")
            touched = [key for key in self.keys if any(self.has_tag(s, st["tag"]) for s in self.allowed(key))]
        elif op == "trim":
            argv = self.cask("trim", self.store, f"--{st['mode']}", st["amount"])
            protected = self.trim_protected(st["mode"], st["amount"])
            touched = [None]
        elif op == "backup":
            dest = os.path.join(self.work, f"backup-{i}")
            argv = self.cask("backup", self.store, dest)
        elif op == "ls":
            argv = self.cask("ls", self.store, "--json")
        elif op == "stats":
            argv = self.cask("stats", self.store, "--json")
        else:  # compact, verify
            argv = self.cask(op, self.store)
        if op in ("compact", "verify", "stats", "ls", "backup"):
            touched = [None]
        via_cache = self.cache_engine and op in CACHE_OPS
        if via_cache:
            argv = self.cache_step(op, k, st, before)
        if self.opts.keep:
            snap = os.path.join(self.work, "before")
            shutil.rmtree(snap, ignore_errors=True)
            shutil.copytree(self.store, snap, symlinks=True)
        cmd = self.run(argv, faulted=True, fault=fault)
        rc = cmd["rc"]
        ok = rc == 0
        answer_no = rc == 1 and op in ANSWER_NO
        if via_cache and rc == 2:
            said = "found none of the allowed values" if op == "get" else "its read-back through the cache disagreed with the acknowledged operation"
            self.defect("cache-readback", i, f"cache-step {op} {k!r}: {said}; model: {fmt_states(before)}", cmd)
            ok = op == "get"   # a get's wrong answer changes nothing; otherwise: may or may not have taken effect
        failed = not ok and not answer_no
        what = f"after {op}"
        if cmd["hang"]:
            self.defect("hang", i, f"{op} did not exit within {self.opts.timeout} s", cmd)
        elif rc < 0:
            self.defect("crash", i, f"{op} died of signal {signal.Signals(-rc).name}", cmd)
        counts = self.out["ops"].setdefault(op, [0, 0])
        counts[0] += 1
        if failed:
            counts[1] += 1
            self.out["failed_cmds"] += 1
            if not cmd["hang"] and rc >= 0 and not via_cache:
                self.check_message(i, op, cmd)

        # The model.
        if op == "put":
            new = (st["value"], st["pin"])
            self.value_tag[st["value"]] = st["tag"] if via_cache else None
            self.history.setdefault(k, set()).add(st["value"])
            self.model[k] = frozenset([new]) if ok else before | {new}
        elif op == "rm":
            if answer_no and None not in before:
                self.defect("wrong-answer", i, f"rm said {k!r} was missing; model: {fmt_states(before)}", cmd)
            self.model[k] = frozenset([None]) if (ok or answer_no) else before | {None}
        elif op == "rmprefix":
            under = [key for key in self.keys if key.startswith(st["prefix"])]
            if answer_no and any(None not in self.allowed(key) for key in under):
                self.defect("wrong-answer", i, f"rm --prefix said no key starts with {st['prefix']!r}; model: "
                                               + ", ".join(f"{key!r}: {fmt_states(self.allowed(key))}" for key in under), cmd)
            for key in under:
                self.model[key] = frozenset([None]) if (ok or answer_no) else self.allowed(key) | {None}
        elif op == "rmtag":
            self.apply_rmtag(i, st["tag"], ok, answer_no, cmd)
        elif op in ("pin", "unpin"):
            flag = op == "pin"
            flagged = frozenset((s[0], flag) for s in before if s is not None)
            if ok:
                self.model[k] = flagged or before
            elif answer_no:
                if None not in before:
                    self.defect("wrong-answer", i, f"{op} said {k!r} was missing; model: {fmt_states(before)}", cmd)
            else:
                self.model[k] = before | flagged
        elif op == "trim":
            for key in self.keys:
                if key not in protected:
                    self.model[key] = self.allowed(key) | {None}
        elif op == "get" and via_cache:
            pass   # cache-step checked the value itself against the allowed ones (exit 1 otherwise)
        elif op == "get":
            if answer_no and None not in before:
                self.defect("wrong-answer", i, f"get said {k!r} was missing; model: {fmt_states(before)}", cmd)
            elif ok:
                s = self.state_of_bytes(cmd["out"], None)
                if not any(a is not None and a[0] == s[0] for a in before):
                    self.defect("wrong-answer", i, f"get {k!r} printed {len(cmd['out'])} bytes, none of "
                                                   f"{fmt_states(before)}", cmd)
        elif op == "ls" and ok:
            self.check_ls_answer(i, cmd)
        elif op == "stats" and ok:
            self.check_stats_answer(i, cmd)
        elif op == "verify" and answer_no:
            v = self.run(self.cask("verify", self.store))
            if v["rc"] == 0:
                said = " / ".join(ln.strip() for ln in cmd["out"].decode("utf-8", "replace").splitlines()[:4])
                self.defect("wrong-answer", i, "faulted verify exit 1 (problems found) but a fault-free "
                                               f"verify finds none: an I/O error reported as damage ({said})", cmd)

        # The checks, fault-free.
        bad, found = self.check(i, self.store, what, touched, all_gets=(i == self.nsteps),
                                trim_count=st["amount"] if op == "trim" and ok and st["mode"] == "count" else None,
                                cmd=cmd)
        if op == "backup":
            if ok:
                bbad, _ = self.check(i, dest, "in the backup", touched=(), cmd=cmd)
            shutil.rmtree(dest, ignore_errors=True)
        # After a defect, take what the readers found for the keys involved.
        for key in bad:
            d, c = found.get(key, (None, None))
            self.model[key] = frozenset([d, c])
        if self.step_defects and self.opts.keep:
            self.keep_finding(i, cmd)
        self.out["log"].append(
            f"seq {self.index} step {i:2d} {op:7s} {k if touched != [None] else '':24.24s} "
            f"p={st['p']:.3f} errno={st['errno']} -> exit {rc}"
            + (" (failed)" if failed else "") + (f"  DEFECTS: {len(self.step_defects)}" if self.step_defects else ""))

    def has_tag(self, state, tag):
        """Whether `state` is a value stored as a cache entry listing `tag`."""
        return state is not None and self.value_tag.get(state[0]) == tag

    def apply_rmtag(self, i, tag, ok, answer_no, cmd):
        """rmtag exit 0 or 1: every key whose value lists the tag is absent (exit 1 while one
        certainly does is a wrong answer); a failed rmtag may or may not have removed them."""
        if answer_no:
            certain = [key for key in self.keys if all(self.has_tag(s, tag) for s in self.allowed(key))]
            if certain:
                self.defect("wrong-answer", i, f"rm --tag said no entry is tagged {tag!r}; model: "
                                               + ", ".join(f"{key!r}: {fmt_states(self.allowed(key))}" for key in certain), cmd)
        for key in self.keys:
            allowed = self.allowed(key)
            removed = frozenset(None if self.has_tag(s, tag) else s for s in allowed)
            self.model[key] = removed if (ok or answer_no) else allowed | removed

    def cache_step(self, op, k, st, before):
        """The argv that runs `op` through CaskCache (cask-harness cache-step)."""
        argv = [self.opts.harness, "cache-step", self.store, op, st["tag"] if op == "rmtag" else k]
        if op == "put":
            path = os.path.join(self.work, "value")
            argv += ["--file", path] + (["--pin"] if st["pin"] else []) + (["--tag", st["tag"]] if st["tag"] else [])
        elif op == "get":
            allowed = ["absent" if s is None else fnv1a(self.values[s[0]]) for s in before
                       if s is None or isinstance(s[0], int)]
            for a in allowed:
                argv += ["--allowed", a]
        return argv

    def check_ls_answer(self, i, cmd):
        try:
            items = {o["key"]: o for o in json.loads(cmd["out"] or b"[]")}
        except ValueError as e:
            self.defect("wrong-answer", i, f"faulted ls exited 0 with unparsable JSON ({e})", cmd)
            return
        for k in set(self.keys) | set(items):
            allowed = self.allowed(k)
            s = self.state_of_length(items[k]["size"], bool(items[k]["pinned"])) if k in items else None
            if s not in allowed:
                self.defect("wrong-answer", i, f"faulted ls exited 0 listing {k!r} as {fmt_state(s)}; "
                                               f"model: {fmt_states(allowed)}", cmd)

    def check_stats_answer(self, i, cmd):
        try:
            items = json.loads(cmd["out"])["items"]
        except (ValueError, KeyError, TypeError) as e:
            self.defect("wrong-answer", i, f"faulted stats --json exited 0 with unparsable output ({e!r})", cmd)
            return
        least = sum(1 for k in self.keys if None not in self.allowed(k))
        most = sum(1 for k in self.keys if self.allowed(k) != frozenset([None]))
        if not least <= items <= most:
            self.defect("wrong-answer", i, f"faulted stats exited 0 counting {items} items; the model "
                                           f"allows {least} to {most}", cmd)

    def check_message(self, i, op, cmd):
        text = cmd["err"].decode("utf-8", "replace")
        lines = [ln for ln in re.split(r"[\r\n]+", text) if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("cask: ")]
        others = [ln for ln in lines if not ln.startswith("cask: ") and not LOG_LINE.match(ln)
                  and not PROGRESS_LINE.match(ln)]
        reason = None
        if any(b in text for b in BAD_TEXT):
            reason = "Foundation message or stack trace"
        elif cmd["rc"] not in (3, 74):
            reason = f"unexpected exit status {cmd['rc']}"
        elif not errors:
            if self.point == "posix/io/rw/write":
                self.out["unverifiable"] += 1      # the message's own write may have failed
                return
            reason = "no `cask: ` line"
        elif len(errors) > 1:
            reason = f"{len(errors)} `cask: ` lines"
        elif others:
            reason = "other text besides the `cask: ` line"
        elif not re.search(r"\(errno \d+\)", errors[0]):
            reason = "no \"(errno N)\""
        elif "/" not in errors[0] and "standard output" not in errors[0]:
            reason = "no path"
        if reason:
            self.out["messages"].append({"sequence": self.index, "step": i, "point": self.point, "op": op,
                                         "rc": cmd["rc"], "reason": reason,
                                         "text": (errors[0] if errors else text.strip())[:300],
                                         "command": shlex.join(cmd["argv"])})

    def keep_finding(self, i, cmd):
        dest = os.path.join(self.opts.keep, f"seed{self.opts.seed}-seq{self.index}-step{i}")
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        shutil.copytree(os.path.join(self.work, "before"), os.path.join(dest, "store-before"), symlinks=True)
        shutil.copytree(self.store, os.path.join(dest, "store-after"), symlinks=True)
        value = os.path.join(self.work, "value")
        if value in cmd["argv"]:
            shutil.copy2(value, os.path.join(dest, "value"))
        with open(os.path.join(dest, "README.txt"), "w") as f:
            f.write(f"seed {self.opts.seed}, sequence {self.index}, step {i}, point {self.point}\n"
                    f"command (store path {self.store}):\n  {shlex.join(cmd['argv'])}\n"
                    f"exit {cmd['rc']}\nstderr:\n{cmd['err'].decode('utf-8', 'replace')}\n\n"
                    "defects:\n" + "".join(f"  {d['kind']}: {d['text']}\n" for d in self.step_defects)
                    + "\nTo rerun the step: cp -a store-before /tmp/x, then the command with /tmp/x as the store\n"
                    "(and this folder's `value` as --file, for a put)\n"
                    "(libfiu is not seeded: repeat it until the fault hits the same call).\n")


def run_one(args):
    opts, index, nsteps, base = args
    work = os.path.join(base, f"seq{index}")
    try:
        seq = Sequence(opts, index, nsteps, work)
        return seq.run_sequence()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def plan(opts):
    """(sequence index, steps) pairs adding up to --ops; a sequence's length comes from its seed."""
    if opts.sequence is not None:
        n = random.Random(f"{opts.seed}/{opts.sequence}/length").randint(40, 60)
        return [(opts.sequence, n)] * opts.repeat
    out, total, i = [], 0, 0
    while total < opts.ops:
        n = min(random.Random(f"{opts.seed}/{i}/length").randint(40, 60), opts.ops - total)
        out.append((i, n))
        total += n
        i += 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"fixes every choice (default {DEFAULT_SEED})")
    ap.add_argument("--ops", type=int, default=None, help=f"steps in all (default {DEFAULT_OPS}; --soak: {SOAK_OPS})")
    ap.add_argument("--soak", action="store_true", help="a much longer run")
    ap.add_argument("--cask", default=os.path.join(REPO, ".build/debug/cask"),
                    help="the cask binary (default .build/debug/cask of the repository)")
    ap.add_argument("--harness", default=os.path.join(REPO, ".build/debug/cask-harness"),
                    help="cask-harness, for the cache engine (`cache-step`: the library's CaskCache, memory in front of disk)")
    ap.add_argument("--engine", choices=["both", "cask", "cache"], default="both",
                    help="who runs put/rm/get/pin/unpin/compact: the cask tool, CaskCache through cask-harness "
                         "cache-step, or both (every third sequence the cache; default)")
    ap.add_argument("--points", default=None, help="comma-separated fault points (or their last parts: pread,fsync)")
    ap.add_argument("--sequence", type=int, default=None, help="run only this sequence of the seed")
    ap.add_argument("--repeat", type=int, default=1, help="with --sequence: run it this many times")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="sequences run at once")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds before a command counts as hung")
    ap.add_argument("--keep", default=None, help="save the store before and after each step with a defect here")
    ap.add_argument("--max-print", type=int, default=25, help="defects and message defects printed in full")
    ap.add_argument("--strict-messages", action="store_true", help="message defects fail the run")
    ap.add_argument("--verbose", action="store_true", help="one line per step")
    ap.add_argument("--key-file", default=None,
                    help="encryption at rest on: every command gets this key (CASK_KEY_FILE), and the "
                         "independent reader opens the sealed values with it")
    opts = ap.parse_args()
    if opts.key_file:
        opts.key_file = os.path.abspath(opts.key_file)
        key = caskdump.read_key_file(opts.key_file)
        opts.keys = {caskdump.key_id(key): key}
    else:
        opts.keys = {}
    if opts.ops is None:
        opts.ops = SOAK_OPS if opts.soak else DEFAULT_OPS
    if not os.path.isabs(opts.cask):
        opts.cask = os.path.join(REPO, opts.cask) if not os.path.exists(opts.cask) else os.path.abspath(opts.cask)
    if not os.access(opts.cask, os.X_OK):
        print(f"fault suite: no cask binary at {opts.cask} (build it: swift build --product cask)", file=sys.stderr)
        return 2
    if shutil.which("fiu-run") is None:
        print("fault suite: fiu-run is missing (apt-get install fiu-utils)", file=sys.stderr)
        return 2
    if opts.keep:
        opts.keep = os.path.abspath(opts.keep)
        os.makedirs(opts.keep, exist_ok=True)
    opts.points_arg = opts.points
    points = POINTS
    if opts.points:
        wanted = [w.strip() for w in opts.points.split(",") if w.strip()]
        points = [p for p in POINTS if any(p[0] == w or p[0].endswith("/" + w) for w in wanted)]
        if not points:
            print(f"fault suite: no fault point matches {opts.points}; known: "
                  + ", ".join(p[0] for p in POINTS), file=sys.stderr)
            return 2
    opts.points = points
    work = plan(opts)
    base = tempfile.mkdtemp(prefix="cask-fault-suite-")
    start = time.monotonic()
    results = []
    print(f"fault suite: seed {opts.seed}, {sum(n for _, n in work)} steps in {len(work)} sequences, "
          f"{len(points)} fault points, {opts.jobs} jobs, cask {opts.cask}"
          + (", encrypted (AES-256-GCM)" if opts.key_file else ""), flush=True)
    try:
        jobs = [(opts, idx, n, os.path.join(base, f"r{j}")) for j, (idx, n) in enumerate(work)]
        with concurrent.futures.ProcessPoolExecutor(max_workers=opts.jobs) as ex:
            for r in ex.map(run_one, jobs):
                results.append(r)
                if opts.verbose:
                    print("\n".join(r["log"]), flush=True)
                elif r["defects"]:
                    print(f"  sequence {r['index']} ({r['point']}): {r['defect_steps']} steps with defects", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    seconds = time.monotonic() - start
    return report(opts, results, seconds)


def report(opts, results, seconds):
    defects = [d for r in results for d in r["defects"]]
    messages = [m for r in results for m in r["messages"]]
    repro = f"python3 tools/fault_suite.py --seed {opts.seed} --cask {shlex.quote(opts.cask)}"
    if opts.points_arg:
        repro += f" --points {shlex.quote(opts.points_arg)}"
    for n, d in enumerate(defects[:opts.max_print]):
        print(f"\nDEFECT {d['kind']}: seed {opts.seed}, sequence {d['sequence']}, step {d['step']}, point {d['point']}")
        print(f"  {d['text']}")
        if "command" in d:
            print(f"  command: {d['command']}")
            print(f"  exit {d['rc']}" + (f"; stderr: {d['stderr']}" if d["stderr"] else ""))
        print(f"  reproduce: {repro} --sequence {d['sequence']} --repeat 10 --keep /tmp/fault-findings")
    if len(defects) > opts.max_print:
        print(f"\n... and {len(defects) - opts.max_print} more defects")
    if messages:
        print("\nmessage defects (a failed command's standard error):")
        groups = {}
        for m in messages:
            key = (m["op"], m["reason"], re.sub(r"/\S*", "PATH", re.sub(r"\d+", "N", m["text"])))
            groups.setdefault(key, []).append(m)
        for n, ((op, reason, _), ms) in enumerate(sorted(groups.items(), key=lambda kv: -len(kv[1]))):
            if n >= opts.max_print:
                print(f"  ... and {len(groups) - opts.max_print} more kinds")
                break
            m = ms[0]
            print(f"  {len(ms)}x {op} (exit {m['rc']}, {m['point']}): {reason}: {m['text']!r}")

    # Summary table.
    by_point = {}
    for r in results:
        row = by_point.setdefault(r["point"], {"seqs": 0, "steps": 0, "failed": 0, "defect_steps": 0,
                                               "defects": 0, "messages": 0})
        row["seqs"] += 1
        row["steps"] += r["steps"]
        row["failed"] += r["failed_cmds"]
        row["defect_steps"] += r["defect_steps"]
        row["defects"] += len(r["defects"])
        row["messages"] += len(r["messages"])
    print(f"\n{'fault point':28s} {'seqs':>5s} {'steps':>6s} {'failed cmds':>12s} {'defect steps':>13s} "
          f"{'defects':>8s} {'msg defects':>12s}")
    for name, _ in POINTS:
        if name in by_point:
            row = by_point[name]
            print(f"{name:28s} {row['seqs']:5d} {row['steps']:6d} {row['failed']:12d} {row['defect_steps']:13d} "
                  f"{row['defects']:8d} {row['messages']:12d}")
    per_op = {}
    for r in results:
        for op, (n, f) in r["ops"].items():
            per_op.setdefault(op, [0, 0])
            per_op[op][0] += n
            per_op[op][1] += f
    print("\nsteps (failed) per command: " + ", ".join(
        f"{op} {per_op[op][0]} ({per_op[op][1]})" for op, _ in OPS if op in per_op))
    kinds = {}
    for d in defects:
        kinds.setdefault(d["kind"], {}).setdefault(d["point"], 0)
        kinds[d["kind"]][d["point"]] += 1
    if kinds:
        print("\ndefects by kind:")
        for kind, per in sorted(kinds.items()):
            print(f"  {kind:17s} {sum(per.values()):5d}  ("
                  + ", ".join(f"{p}: {n}" for p, n in sorted(per.items())) + ")")
    steps = sum(r["steps"] for r in results)
    failed = sum(r["defect_steps"] for r in results)
    unverifiable = sum(r["unverifiable"] for r in results)
    print(f"\n{steps} steps, {sum(r['failed_cmds'] for r in results)} failed commands, {len(defects)} defects, "
          f"{len(messages)} message defects ({unverifiable} messages under write faults not checkable), "
          f"{seconds:.0f} s")
    print(f"fault suite: {steps - failed} passed, {failed} failed")
    if failed or (opts.strict_messages and messages):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
