#!/usr/bin/env python3
"""An independent reader of Cask stores, written from format-spec.md alone.

It lists every live key of a store directory with its value's size, stored size, flags, times
and a CRC32C of the value, without changing any file. Where it disagrees with `cask ls --json`,
the spec or the Swift code is wrong.

usage: python3 tools/caskdump.py DIR [--json] [--now-ms MS] [--key-file PATH]...
Needs Python 3 and the `lz4` package (pip install lz4). An encrypted store (format version 7 or 8)
needs its keys, one --key-file each (current and previous keys; a file holds 32 raw bytes or 64
hex characters), and the `cryptography` package (pip install cryptography).
"""
import hashlib
import hmac
import json
import os
import re
import struct
import sys
import time

import lz4.block

SEGMENT_MAGIC = b"CASKSEG\x00"
HINT_MAGIC = b"CASKHNT\x00"
HINT_END = b"HEND"
VERSION = 8          # reads versions 1 to 8 (2 added pin records, kind 3; 3 compact hint entries;
                     # 4 cache entries: record flag bit 2, the value starts with an entry header;
                     # 5 removal records, kind 4: the key field is a prefix; 6 tags: flag bit 3,
                     # entry header version 2, a tagged removal's key field is a tag; 7 sealed
                     # records: flag bit 4, the segment header names the key; in an encrypted
                     # store pin records are sealed and hint files end with a seal; 8 the seals
                     # also bind the store id of STOREID, spec "Store id")
HINT_VERSION = 6     # hint files keep version 6's layout (spec: "Versioning", version 7)
SEALED = 32          # u32 key id, 12-byte nonce, then after the ciphertext a 16-byte tag
HINT_SEAL = 32       # u32 key id, 8-byte base, one 16-byte tag, "HSEL" (spec: "File seals")
STORE_ID_MAGIC = b"CASKSID\x00"
STORE_ID_SIZE = 48   # magic, u32 version 1, u32 0, 16-byte id, u64 legacy limit, u32 0, u32 checksum
HINT_SEAL_MAGIC = b"HSEL"
ENTRY_HEADER = 9     # u8 version (1, or 2 with tags), i64 freshUntil (ms, > 0)
TAGGED_ENTRY_MIN = 12  # version 2: + u8 tag count (1..64), then per tag u8 length (1..255) and bytes
SEGMENT_HEADER = 48
RECORD_HEADER = 40
HINT_HEADER = 48
HINT_ENTRY = 52
MAX_KEY = 1024
MAX_VALUE = 1 << 30
MAX_SEQUENCE = (1 << 56) - 1   # spec "Sequence numbers": the last a writer issues

# --- Checksums (spec: "Conventions") -------------------------------------------------------
_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = (crc >> 8) ^ _TABLE[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


# --- Segment header (spec: "Segment header") ------------------------------------------------
def header_intact(b, version):
    """The version (bytes 8..<12) says where the checksum lies: versions 1-6 at 40 over 0..<40,
    versions 7 and 8 at 44 over 0..<44 (after the key id); a newer one is intact at either place."""
    at_40 = masked(crc32c(b[0:40])) == struct.unpack_from("<I", b, 40)[0]
    at_44 = masked(crc32c(b[0:44])) == struct.unpack_from("<I", b, 44)[0]
    if version in (7, 8):
        return at_44
    return at_40 or (version > VERSION and at_44)


def parse_segment_header(b):
    """Returns a dict, or None when the header fails its checks."""
    if len(b) < SEGMENT_HEADER or b[0:8] != SEGMENT_MAGIC:
        return None
    version, kind, flags, _res, seg_id, min_seq, seq_limit = struct.unpack_from("<IBBHQQQ", b, 8)
    if not header_intact(b, version):
        return None
    if version > VERSION:
        raise SystemExit(f"format version {version} is newer than this reader ({VERSION})")
    key_id = struct.unpack_from("<I", b, 40)[0] if version >= 7 else 0
    if version < 1 or kind not in (1, 2) or flags & ~1 or (version >= 7 and key_id == 0):
        return None
    if seg_id > 0xFFFFFFFF or min_seq > MAX_SEQUENCE or seq_limit > MAX_SEQUENCE + 1:
        return None
    return {"id": seg_id, "kind": kind, "clears_older": bool(flags & 1),
            "min_seq": min_seq, "seq_limit": seq_limit, "version": version, "key_id": key_id}


# --- Records (spec: "Record") ---------------------------------------------------------------
def decode_record(b, off):
    """Returns (record dict) or None when the bytes at `off` are not a valid record."""
    if len(b) - off < RECORD_HEADER:
        return None
    crc, seq, wtime, expiry, kind, flags, klen, slen, olen = struct.unpack_from("<IQqqBBHII", b, off)
    if kind not in (1, 2, 3, 4) or flags & ~31:
        return None
    if not (1 <= klen <= MAX_KEY) or slen > MAX_VALUE or olen > MAX_VALUE:
        return None
    if seq > MAX_SEQUENCE or (kind in (2, 3) and expiry & ((1 << 64) - 1) > MAX_SEQUENCE):
        return None
    compressed = bool(flags & 1)
    sealed = SEALED if flags & 16 else 0     # spec "Sealed records": key id, nonce and tag
    if kind == 2:
        if slen or olen or flags:
            return None
    elif kind == 3:      # pin record: no value, only the pinned flag; sealed, the seal of nothing
        if olen or flags & ~18 or slen != sealed:
            return None
    elif kind == 4:      # removal record: the key field is a prefix (or, flag bit 3, a tag); no value, no expiry
        if slen or olen or flags & ~8 or expiry:
            return None
    elif compressed:
        if slen <= sealed or olen == 0:
            return None
    elif slen != olen + sealed:
        return None
    if flags & 4 and olen < ENTRY_HEADER:
        return None
    if kind == 1 and flags & 8 and (not flags & 4 or olen < TAGGED_ENTRY_MIN):
        return None
    end = off + RECORD_HEADER + klen + slen
    if end > len(b):
        return None
    if masked(crc32c(b[off + 4:end])) != crc:
        return None
    key = b[off + RECORD_HEADER:off + RECORD_HEADER + klen]
    # A sealed value's (or pin's) associated data: record bytes 4 ..< 40 + keyLength + 4
    # (spec "Sealed records").
    aad = b[off + 4:off + RECORD_HEADER + klen + 4] if sealed else None
    return {"seq": seq, "write": wtime, "expiry": expiry, "kind": kind, "flags": flags,
            "key": key, "stored": b[off + RECORD_HEADER + klen:end], "original_length": olen,
            "offset": off, "size": end - off, "aad": aad}


def scan_segment(b):
    """Valid records in file order, and damaged ranges (start, end, next_seq or None)."""
    records, damage = [], []
    off = SEGMENT_HEADER
    while off < len(b):
        r = decode_record(b, off)
        if r:
            records.append(r)
            off += r["size"]
            continue
        nxt = off + 1
        while nxt + RECORD_HEADER <= len(b) and decode_record(b, nxt) is None:
            nxt += 1
        if nxt + RECORD_HEADER > len(b):
            damage.append((off, len(b), None))
            break
        damage.append((off, nxt, decode_record(b, nxt)["seq"]))
        off = nxt
    return records, damage


# --- Keys and sealed values (spec: "Sealed records") ---------------------------------------
def key_id(key):
    """The first 4 bytes (little-endian) of HMAC-SHA256(key, "cask key id"); 0 becomes 1."""
    kid = struct.unpack_from("<I", hmac.new(key, b"cask key id", hashlib.sha256).digest())[0]
    return kid or 1


def read_key_file(path):
    """A 32-byte AES-256 key: 32 raw bytes, or 64 hex characters with whitespace around them."""
    data = open(path, "rb").read()
    if len(data) == 32:
        return data
    text = data.strip()
    if len(text) == 64 and re.fullmatch(rb"[0-9a-fA-F]{64}", text):
        return bytes.fromhex(text.decode("ascii"))
    raise SystemExit(f"{path}: not a key (32 raw bytes or 64 hex characters)")


# --- Store id (spec: "Store id") -----------------------------------------------------------
def read_store_binding(directory, segments):
    """The 24 bytes every version-8 seal binds (STOREID bytes 16..<40: the id and the legacy
    limit) and the legacy limit, or (None, None) for a store without STOREID and with no
    version-8 segment (a version-7 store). The file is checked strictly; a damaged one, or a
    missing one beside a version-8 segment, stops the reader as it refuses Cask's open."""
    path = os.path.join(directory, "STOREID")
    if os.path.islink(path):
        raise SystemExit(f"{path} is a symbolic link: not read")
    if not os.path.exists(path):
        v8 = [i for i, (_, h) in segments.items() if h and h["version"] >= 8]
        if v8:
            raise SystemExit(f"{path} is missing, and {v8[0]:010d}.cask binds the store id (format version 8)")
        return None, None
    b = open(path, "rb").read()
    if len(b) != STORE_ID_SIZE or b[0:8] != STORE_ID_MAGIC or masked(crc32c(b[0:44])) != struct.unpack_from("<I", b, 44)[0]:
        raise SystemExit(f"{path} is damaged (size, magic or checksum)")
    version, reserved, limit, reserved2 = struct.unpack_from("<II", b, 8) + struct.unpack_from("<QI", b, 32)
    if version != 1 or reserved or reserved2 or limit > 0xFFFFFFFF:
        raise SystemExit(f"{path} has version {version}, reserved bytes or a legacy limit this reader does not know")
    return b[16:40], limit


def bind(rec, seg_id, binding, legacy_limit):
    """A sealed record of a segment above the legacy limit binds the store (version 8): its
    associated data is version 7's followed by the 24 binding bytes."""
    if rec is not None and rec["aad"] is not None and binding is not None and seg_id > legacy_limit:
        rec["aad"] = rec["aad"] + binding
    return rec


def unseal(rec, keys):
    """What an unsealed record would store, or None when the key id is not among `keys` (id ->
    key) or the value fails authentication: keyID | nonce | ciphertext | tag."""
    stored = rec["stored"]
    key = keys.get(struct.unpack_from("<I", stored, 0)[0])
    if key is None:
        return None
    try:
        return aes_gcm(key).decrypt(stored[4:16], stored[16:], rec["aad"])
    except Exception:
        return None


def aes_gcm(key):
    try:     # imported here: a store without sealed records needs no third-party package
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        raise SystemExit("reading sealed records needs the cryptography package (pip install cryptography)")
    return AESGCM(key)


def pin_seal_holds(rec, keys):
    """Spec "Sealed records": in an encrypted store a pin record applies only if it is sealed
    and its seal (of an empty plaintext) opens; in a store without encryption flag bit 4 is
    damage."""
    if not keys:
        return not rec["flags"] & 16
    return bool(rec["flags"] & 16) and unseal(rec, keys) == b""


def hint_seal_holds(data, keys, binding=None):
    """Spec "File seals": a hint file ends with keyID | base (8 bytes) | one tag | "HSEL". The tag
    is AES-256-GCM under the seal key HMAC-SHA256(store key, "cask file seal"), nonce base | u32 0
    (its one section), of an empty plaintext with the store binding (when the store has one)
    and every byte before the seal as associated data."""
    if len(data) < HINT_SEAL or data[-4:] != HINT_SEAL_MAGIC:
        return False
    seal = data[-HINT_SEAL:]
    key = keys.get(struct.unpack_from("<I", seal, 0)[0])
    if key is None:
        return False
    seal_key = hmac.new(key, b"cask file seal", hashlib.sha256).digest()
    try:
        aes_gcm(seal_key).decrypt(seal[4:12] + struct.pack("<I", 0), seal[12:28], (binding or b"") + data[:-HINT_SEAL])
    except Exception:
        return False
    return True


def check_keys(segments, keys):
    """Spec "Keys at open": every intact segment header is checked before anything is read."""
    sealed = {i: h["key_id"] for i, (_, h) in segments.items() if h and h["version"] >= 7}
    given = ", ".join(f"{k:08x}" for k in sorted(keys))
    if sealed and not keys:
        needed = ", ".join(f"{k:08x}" for k in sorted(set(sealed.values())))
        raise SystemExit(f"the store is encrypted: give its key with --key-file (key ids needed: {needed})")
    for i, kid in sorted(sealed.items()):
        if kid not in keys:
            raise SystemExit(f"{i:010d}.cask is sealed with key id {kid:08x}, "
                             f"which none of the given keys has (given key ids: {given})")
    for i, (data, h) in sorted(segments.items()):
        if keys and h and h["version"] <= 6 and len(data) > SEGMENT_HEADER:
            raise SystemExit(f"the store is not encrypted ({i:010d}.cask, format version {h['version']}, "
                             f"holds records): run without --key-file")


# --- Hint files (spec: "Hint file") ---------------------------------------------------------
def parse_hint(b, seg_id, seg_size, keys=None, binding=None):
    """Entries of a valid hint file, or None when any check fails. With encryption on (`keys`)
    the hint must end with a seal that holds, and the checks apply to the bytes before it (spec
    "Hint file", validity; "File seals"); without, a sealed hint fails (no HEND at the end)."""
    if keys:
        if not hint_seal_holds(b, keys, binding):
            return None
        b = b[:-HINT_SEAL]
    if len(b) < HINT_HEADER + 8 or b[0:8] != HINT_MAGIC:
        return None
    if masked(crc32c(b[0:40])) != struct.unpack_from("<I", b, 40)[0]:
        return None
    version, _r, hid, hsize, count = struct.unpack_from("<IIQQQ", b, 8)
    if version > HINT_VERSION or version < 1 or hid != seg_id or hsize != seg_size:
        return None
    body_end = len(b) - 8
    if b[body_end + 4:] != HINT_END or masked(crc32c(b[HINT_HEADER:body_end])) != struct.unpack_from("<I", b, body_end)[0]:
        return None
    entries = parse_compact_entries(b, body_end, seg_size) if version >= 3 else parse_fixed_entries(b, body_end, seg_size)
    return entries if entries is not None and len(entries) == count else None


def parse_fixed_entries(b, body_end, seg_size):
    """Hint entries of versions 1 and 2: 52 bytes, then the key."""
    entries, off = [], HINT_HEADER
    while off < body_end:
        if off + HINT_ENTRY > body_end:
            return None
        seq, roff, wtime, expiry, atime, kind, flags, klen, slen, olen = struct.unpack_from("<QQqqqBBHII", b, off)
        if kind not in (1, 2, 3) or seq > MAX_SEQUENCE or not (1 <= klen <= MAX_KEY) or roff < SEGMENT_HEADER \
                or roff + RECORD_HEADER + klen + slen > seg_size or off + HINT_ENTRY + klen > body_end:
            return None
        if kind == 3 and (olen or flags & ~18 or slen != (SEALED if flags & 16 else 0)):
            return None
        entries.append({"seq": seq, "offset": roff, "write": wtime, "expiry": expiry, "access": atime,
                        "kind": kind, "flags": flags, "key": b[off + HINT_ENTRY:off + HINT_ENTRY + klen],
                        "stored_length": slen, "original_length": olen})
        off += HINT_ENTRY + klen
    return entries


def varint(b, off, end):
    """A LEB128 varint of at most 10 bytes that fits 64 bits: (value, next offset), or None."""
    value, shift = 0, 0
    while off < end and shift <= 63:
        byte = b[off]
        off += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return (value, off) if value < 1 << 64 else None
        shift += 7
    return None


def signed(v):
    """The int64 whose zigzag code is v."""
    return to_int64((v >> 1) ^ -(v & 1))


def to_int64(v):
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


def parse_compact_entries(b, body_end, seg_size):
    """Hint entries of version 3: a descriptor byte, varints, the key; the records tile the segment."""
    entries, off = [], HINT_HEADER
    seq, write, roff = 0, 0, SEGMENT_HEADER
    while off < body_end:
        d = b[off]
        off += 1
        kind, flags = d & 3, (d >> 2) & 3
        kind = kind or 4         # kind bits 0: a removal record (format version 5)
        if d & 0x80:             # bit 7: tagged (format version 6), values and removals only
            if kind not in (1, 4):
                return None
            flags |= 8 | (4 if kind == 1 else 0)
        fields = []
        for present in (True, True, d & 0x20, d & 0x40, True, True, d & 0x10):
            if not present:
                fields.append(None)
                continue
            r = varint(b, off, body_end)
            if r is None:
                return None
            fields.append(r[0])
            off = r[1]
        dseq, dwrite, exp, acc, klen, slen, olen = fields
        seq = (seq + dseq) & ((1 << 64) - 1)
        if dseq > MAX_SEQUENCE or seq > MAX_SEQUENCE:
            return None
        write = to_int64(write + signed(dwrite))
        base = write if kind == 1 else to_int64(seq)
        expiry = 0 if exp is None else to_int64(base + signed(exp))
        atime = write if acc is None else to_int64(write + signed(acc))
        olen = slen if olen is None else olen
        if not (1 <= klen <= MAX_KEY) or slen > 1 << 30 or olen > 1 << 30 or off + klen > body_end \
                or roff + RECORD_HEADER + klen + slen > seg_size:
            return None
        if kind == 3 and (olen or flags & ~2 or slen not in (0, SEALED)):    # 32: a sealed pin record
            return None
        if kind == 4 and (slen or olen or flags & ~8 or expiry):
            return None
        entries.append({"seq": seq, "offset": roff, "write": write, "expiry": expiry, "access": atime,
                        "kind": kind, "flags": flags, "key": b[off:off + klen],
                        "stored_length": slen, "original_length": olen})
        off += klen
        roff += RECORD_HEADER + klen + slen
    return entries if roff == seg_size else None


# --- The store (spec: "Directory layout", "Recovery on open") ------------------------------
def read_store(directory, keys=None):
    """`keys` maps key id -> key; when it has any, encryption is on (spec "Sealed records")."""
    keys = keys or {}
    names = os.listdir(directory)
    ids = sorted(int(n[:10]) for n in names if re.fullmatch(r"\d{10}\.cask", n))
    segments = {}
    for i in ids:
        data = open(os.path.join(directory, f"{i:010d}.cask"), "rb").read()
        segments[i] = (data, parse_segment_header(data))
    check_keys(segments, keys)
    binding, legacy_limit = read_store_binding(directory, segments) if keys else (None, None)
    epoch = max([i for i, (_, h) in segments.items() if h and h["clears_older"]], default=None)
    if epoch is not None:
        segments = {i: s for i, s in segments.items() if i >= epoch}
    # Log segments holding only their header (and clearing nothing) hold no record: skipped
    # (spec step 2), so the newest log segment for the torn-tail rule is the one before a
    # segment prepared for a rollover (spec "Rollover", step 6).
    segments = {i: s for i, s in segments.items()
                if not (s[1] and s[1]["kind"] == 1 and not s[1]["clears_older"] and len(s[0]) == SEGMENT_HEADER)}
    order = sorted(segments)
    last_log = max([i for i in order if segments[i][1] is None or segments[i][1]["kind"] == 1], default=None)

    newest = {}          # key -> (seq, info)
    pins = []            # (seq, key, target seq, pinned): pin records, applied after all (step 4)
    removals = []        # (seq, prefix or tag, tagged): removal records, applied after all (step 4)
    bound = 0            # salvage bound (spec step 7)
    problems = []
    for pos, i in enumerate(order):
        data, header = segments[i]
        hint_path = os.path.join(directory, f"{i:010d}.hint")
        entries = None
        if header and os.path.exists(hint_path):
            entries = parse_hint(open(hint_path, "rb").read(), i, len(data), keys, binding)
        if entries is not None:
            for e in entries:
                if e["kind"] == 4:
                    removals.append((e["seq"], e["key"], bool(e["flags"] & 8)))
                    continue
                if e["kind"] == 3:
                    # A sealed hint holds only pins whose seal opened (spec "File seals"); its
                    # storedLength says whether the record is sealed (32) or not (0).
                    if (e["stored_length"] == SEALED) == bool(keys):
                        pins.append((e["seq"], e["key"], e["expiry"] & 0xFFFFFFFFFFFFFFFF, bool(e["flags"] & 2)))
                    else:
                        problems.append(f"{i:010d}.hint: pin record of {e['key']!r} at {e['offset']} "
                                        f"is {'not ' if keys else ''}sealed: not applied")
                    continue
                rec = bind(decode_record(data, e["offset"]), i, binding, legacy_limit)
                if rec is not None and not record_matches(rec, e):
                    rec = None   # found on read as damage (spec "Recovery on open", rule 8)
                info = {"kind": e["kind"], "flags": e["flags"], "write": e["write"], "expiry": e["expiry"],
                        "segment": i, "offset": e["offset"], "original_length": e["original_length"],
                        "stored_length": e["stored_length"], "record": rec}
                if e["key"] not in newest or newest[e["key"]][0] < e["seq"]:
                    newest[e["key"]] = (e["seq"], info)
            continue
        if header is None and len(data) <= SEGMENT_HEADER and i == last_log:
            continue     # a segment whose creation never completed
        records, damage = scan_segment(data)
        records = [bind(r, i, binding, legacy_limit) for r in records]
        # In the newest log segment everything from the first damaged byte on is a torn tail
        # (spec step 6): records after it were never durable and are ignored.
        tail = damage[0][0] if (i == last_log and header is not None and damage) else None
        if tail is not None:
            records = [r for r in records if r["offset"] < tail]
            damage = []
        for r in records:
            if r["kind"] == 4:
                removals.append((r["seq"], r["key"], bool(r["flags"] & 8)))
                continue
            if r["kind"] == 3:
                if pin_seal_holds(r, keys):
                    pins.append((r["seq"], r["key"], r["expiry"] & 0xFFFFFFFFFFFFFFFF, bool(r["flags"] & 2)))
                else:    # spec "Sealed records": damage, counted and not applied
                    problems.append(f"{i:010d}.cask:{r['offset']}: pin record of {r['key']!r}: "
                                    f"its seal does not hold, not applied")
                continue
            info = {"kind": r["kind"], "flags": r["flags"], "write": r["write"], "expiry": r["expiry"],
                    "segment": i, "offset": r["offset"], "original_length": r["original_length"],
                    "stored_length": len(r["stored"]), "record": r}
            if r["key"] not in newest or newest[r["key"]][0] < r["seq"]:
                newest[r["key"]] = (r["seq"], info)
        for (start, end, next_seq) in damage:
            problems.append(f"{i:010d}.cask:{start}: {end - start} damaged bytes")
            if next_seq is not None:
                b = next_seq
            elif header and header["kind"] == 2 and header["seq_limit"]:
                b = header["seq_limit"]
            else:
                later = [segments[j][1]["min_seq"] for j in order[pos + 1:] if segments[j][1] and segments[j][1]["kind"] == 1]
                b = later[0] if later else (1 << 64) - 1
            bound = max(bound, b)
    # A removal record removes every older record of a key that starts with its prefix
    # (spec: "Recovery on open", step 4).
    prefixes = [(rs, p) for rs, p, tagged in removals if not tagged]
    for key in [k for k, (seq, _) in newest.items() if any(seq < rs and k.startswith(p) for rs, p in prefixes)]:
        del newest[key]
    # A tag removal removes every older tagged cache entry whose entry header lists the tag
    # (spec: "Removal by tag"); the tags are read from the records.
    tags = [(rs, t) for rs, t, tagged in removals if tagged]
    for key in [k for k, (seq, info) in newest.items() if tags and info["kind"] == 1 and info["flags"] & 8]:
        seq, info = newest[key]
        found = value_of(info, keys)
        if found is not None and any(seq < rs and t in found[2] for rs, t in tags):
            del newest[key]
    # Pin records, in sequence order, set or clear the pinned flag of the value record they
    # name while it is still the key's newest record (spec: "Recovery on open", step 4).
    for seq, key, target, pinned in sorted(pins, key=lambda p: p[0]):
        if key in newest and newest[key][0] == target and newest[key][1]["kind"] == 1:
            info = newest[key][1]
            info["flags"] = (info["flags"] | 2) if pinned else (info["flags"] & ~2)
    return newest, bound, problems


def record_matches(rec, entry):
    """A read checks that the record a hint entry names is that entry's (key, sequence, kind),
    and for a sealed record its expiry too (spec "Sealed records": a difference is damage)."""
    return (rec["key"] == entry["key"] and rec["seq"] == entry["seq"] and rec["kind"] == entry["kind"]
            and (not rec["flags"] & 16 or rec["expiry"] == entry["expiry"]))


def value_of(info, keys=None):
    """(value, fresh_until, tags) of a record (fresh_until 0 and no tags unless it is a cache
    entry), or None. `keys` (key id -> key) opens sealed values."""
    rec = info["record"]
    if rec is None:
        return None
    out = rec["stored"]
    # Spec "Sealed records", check order on read: with encryption on a value must be sealed;
    # a key id not among the keys, or a failed authentication, is damage like a bad checksum.
    if rec["flags"] & 16:
        out = unseal(rec, keys or {})
        if out is None:
            return None
    elif keys:
        return None
    if rec["flags"] & 1:
        try:
            out = lz4.block.decompress(out, uncompressed_size=rec["original_length"])
        except Exception:
            return None
        if len(out) != rec["original_length"]:
            return None
    if not rec["flags"] & 4:
        return out, 0, []
    # Spec "Entry header": version 1 (no tags) or 2 (tags, with record flag bit 3), then a
    # positive freshUntil; version 2 lists 1..64 tags of 1..255 bytes each.
    version = out[0] if out else 0
    if len(out) < ENTRY_HEADER or version not in (1, 2) or (version == 2) != bool(rec["flags"] & 8):
        return None
    fresh_until = struct.unpack_from("<q", out, 1)[0]
    if fresh_until <= 0:
        return None
    if version == 1:
        return out[ENTRY_HEADER:], fresh_until, []
    if len(out) <= ENTRY_HEADER or not 1 <= out[ENTRY_HEADER] <= 64:
        return None
    tags, off = [], ENTRY_HEADER + 1
    for _ in range(out[ENTRY_HEADER]):
        if off >= len(out) or out[off] == 0 or off + 1 + out[off] > len(out):
            return None
        tags.append(bytes(out[off + 1:off + 1 + out[off]]))
        off += 1 + out[off]
    return out[off:], fresh_until, tags


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    directory = args[0]
    now = int(time.time() * 1000)
    if "--now-ms" in args:
        now = int(args[args.index("--now-ms") + 1])
    keys = {}            # key id -> key: the current key and any previous ones
    for n, a in enumerate(args):
        if a == "--key-file":
            if n + 1 == len(args):
                raise SystemExit("--key-file needs a PATH")
            key = read_key_file(args[n + 1])
            keys[key_id(key)] = key
    newest, bound, problems = read_store(directory, keys)
    items = []
    for key, (seq, info) in sorted(newest.items()):
        if info["kind"] == 2 or seq < bound:
            continue
        pinned = bool(info["flags"] & 2)
        if info["expiry"] and now >= info["expiry"] and not pinned:
            continue
        found = value_of(info, keys)
        if found is None:
            problems.append(f"{info['segment']:010d}.cask:{info['offset']}: record of {key!r} fails its checks")
            continue
        value, fresh_until, tags = found
        # A tagged entry stored without a stale window is fresh until it expires.
        stale_window = fresh_until > 0 and (not tags or not info["expiry"] or fresh_until < info["expiry"])
        items.append({"key": key.decode("utf-8"), "size": len(value), "storedSize": info["stored_length"],
                      "compressed": bool(info["flags"] & 1), "pinned": pinned, "staleWindow": stale_window,
                      "expiryTime": info["expiry"] or None, "crc32c": crc32c(value)})
        if tags:
            items[-1]["tags"] = [t.decode("utf-8") for t in tags]
        if fresh_until:
            items[-1]["freshUntil"] = fresh_until
    if "--json" in args:
        print(json.dumps(items, indent=1, sort_keys=True))
    else:
        for it in items:
            print(f"{it['key']}\t{it['size']}\t{it['storedSize']}\t{'lz4' if it['compressed'] else '-'}\t"
                  f"{'pinned' if it['pinned'] else ''}\t{it['crc32c']:08x}")
    for p in problems:
        print("DAMAGED", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
