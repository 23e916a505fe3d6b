#!/usr/bin/env python3
"""Checks the order of file-system calls in an `strace -f` trace of Cask against the crash
consistency rules (format-spec.md, "Writing protocol" and "Compaction"):

1. a rename's source was fsynced after its last write, and a directory fsync follows the rename
   before any segment is unlinked or any record written to a new segment;
2. a new segment file's directory entry is fsynced before any record (after its header) is
   appended to it;
3. no segment is unlinked while a renamed compaction output is not yet durable;
4. no record is written to a log segment while a lower-numbered segment has writes not yet
   fsynced (a sealed segment is durable before anything is appended to the next one, also when
   it is sealed behind the gate of a background rollover).

The index snapshot (`INDEX`, written at a clean close) is exempt from rule 1 by design: it is
never synced, and open checks it against the segments (format-spec.md, "Index snapshot").

usage: strace -f -qq -e trace=openat,write,pwrite64,fsync,fdatasync,rename,unlink,ftruncate -o T cask ...
       python3 tools/check_syscall_order.py T STORE_DIR
"""
import re
import sys

trace, store = sys.argv[1], sys.argv[2].rstrip("/")
fds = {}              # fd -> path, as of the trace so far
pending = {}          # pid -> (unfinished call text, path its fd named at entry)
calls = []            # (completed call text, path of its fd at entry), in completion order

def fd_path(text):
    """The path of a write/fsync's fd, looked up when the call starts: strace may print another
    thread's later events first, but this thread could not have closed the fd yet."""
    m = re.match(r"(?:write|pwrite64|fsync|fdatasync)\((\d+)", text)
    return fds.get(int(m.group(1))) if m else None

for raw in open(trace):
    raw = raw.rstrip("\n")
    m = re.match(r"^(\d+)\s+(.*)$", raw)
    if not m:
        continue
    pid, text = m.group(1), m.group(2)
    if text.endswith("<unfinished ...>"):
        start_text = text[: -len("<unfinished ...>")].rstrip()
        pending[pid] = (start_text, fd_path(start_text))
        continue
    r = re.match(r"^<\.\.\. (\w+) resumed>(.*)$", text)
    if r:
        start_text, path = pending.pop(pid, (r.group(1) + "(", None))
        text = start_text + r.group(2)
    else:
        path = fd_path(text)
    # A resumed call's text has padding before " = ".
    o = re.match(r'openat\(AT_FDCWD, "([^"]+)", [^)]*\)\s*=\s*(\d+)', text)
    if o:
        fds[int(o.group(2))] = o.group(1)
    calls.append((text, path))

dirty = set()         # paths written since their last fsync
writes = {}           # path -> number of writes
need_dir_sync = set() # paths created or renamed-into since the last directory fsync
renamed_outputs = set()
violations = []
checked = {"rename": 0, "unlink": 0, "dir_fsync": 0, "segment_writes": 0}

def ok(text):
    return re.search(r"= (-?\d+)", text) and not re.search(r"= -1 ", text)

renamed = {}          # old path -> new path, for paths resolved before a rename
for c, entry_path in calls:
    if not ok(c):
        continue
    if c.startswith("openat("):
        m = re.match(r'openat\(AT_FDCWD, "([^"]+)", ([^)]*)\)\s*=\s*(\d+)', c)
        if m:
            path, flags = m.group(1), m.group(2)
            if "O_CREAT" in flags and path.startswith(store + "/") and not path.endswith("LOCK"):
                need_dir_sync.add(path)
                writes[path] = 0 if "O_TRUNC" in flags or path not in writes else writes[path]
    elif c.startswith(("write(", "pwrite64(")):
        path = renamed.get(entry_path, entry_path)
        if path and path.startswith(store + "/"):
            dirty.add(path)
            writes[path] = writes.get(path, 0) + 1
            if path.endswith(".cask") and writes[path] > 1:
                checked["segment_writes"] += 1
                if path in need_dir_sync:
                    violations.append(f"record written to {path} before its directory entry was fsynced")
                older = sorted(p for p in dirty if p.endswith(".cask") and p < path)
                if older:
                    violations.append(f"record written to {path} while {older} had unsynced writes")
    elif c.startswith(("fsync(", "fdatasync(")):
        path = renamed.get(entry_path, entry_path)
        if path == store:
            checked["dir_fsync"] += 1
            need_dir_sync.clear()
            renamed_outputs.clear()
        elif path:
            dirty.discard(path)
    elif c.startswith("rename("):
        m = re.match(r'rename\("([^"]+)", "([^"]+)"\)', c)
        if not m:
            continue
        src, dst = m.group(1), m.group(2)
        if dst.endswith("/INDEX"):
            renamed[src] = dst
            continue
        checked["rename"] += 1
        if src in dirty:
            violations.append(f"rename of {src} without an fsync after its last write")
        need_dir_sync.add(dst)
        if dst.endswith(".cask"):
            renamed_outputs.add(dst)
        renamed[src] = dst
        for fd, p in list(fds.items()):
            if p == src:
                fds[fd] = dst
        if src in writes:
            writes[dst] = writes.pop(src)
    elif c.startswith("unlink("):
        path = re.match(r'unlink\("([^"]+)"\)', c).group(1)
        if path.endswith(".cask"):
            checked["unlink"] += 1
            if renamed_outputs:
                violations.append(f"unlink of {path} before the directory fsync covering {sorted(renamed_outputs)}")

print(f"syscall order: {len(calls)} calls, {checked['rename']} renames, {checked['unlink']} segment unlinks, "
      f"{checked['dir_fsync']} directory fsyncs, {checked['segment_writes']} record writes checked, {len(violations)} violations")
for v in violations[:20]:
    print("VIOLATION", v)
sys.exit(1 if violations else 0)
