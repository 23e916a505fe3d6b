/// One entry of a hint file: where a record lies in its segment and what the index needs of it.
package struct HintEntry: Sendable {
    package var sequence: UInt64
    package var offset: UInt64
    package var writeTime: Int64
    package var expiry: Int64
    package var accessTime: Int64
    package var kind: Format.RecordKind
    package var flags: UInt8
    package var keyLength: Int
    package var storedLength: Int
    package var originalLength: Int

    package var recordSize: Int { RecordCodec.encodedSize(keyLength: keyLength, storedLength: storedLength) }

    package init(sequence: UInt64, offset: UInt64, writeTime: Int64, expiry: Int64, accessTime: Int64, kind: Format.RecordKind, flags: UInt8, keyLength: Int, storedLength: Int, originalLength: Int) {
        self.sequence = sequence
        self.offset = offset
        self.writeTime = writeTime
        self.expiry = expiry
        self.accessTime = accessTime
        self.kind = kind
        self.flags = flags
        self.keyLength = keyLength
        self.storedLength = storedLength
        self.originalLength = originalLength
    }
}

/// Reads and writes hint files (`<id>.hint`): a sealed segment's index entries, so that open need
/// not read the segment. Layout: format-spec.md, "Hint file". A hint file is only an optimisation:
/// any doubt about it (checksum, lengths, a segment size that differs) means the segment is scanned.
package enum HintFile {
    /// Appends one version-2 entry (52 bytes, then the key) to `body`: for tests that check
    /// older stores still open. Version 3 entries come from ``HintEntryEncoder``.
    package static func appendVersion2Entry(_ e: HintEntry, key: UnsafeRawBufferPointer, to body: inout [UInt8]) {
        withUnsafeTemporaryAllocation(byteCount: Format.version2HintEntrySize, alignment: 8) { out in
            out.put(e.sequence, at: 0)
            out.put(e.offset, at: 8)
            out.put(e.writeTime, at: 16)
            out.put(e.expiry, at: 24)
            out.put(e.accessTime, at: 32)
            out.put(e.kind.rawValue, at: 40)
            out.put(e.flags, at: 41)
            out.put(UInt16(e.keyLength), at: 42)
            out.put(UInt32(e.storedLength), at: 44)
            out.put(UInt32(e.originalLength), at: 48)
            body.appendBytes(UnsafeRawBufferPointer(out))
        }
        body.appendBytes(key)
    }

    /// A complete hint file: header, the entry bytes built with ``appendEntry(_:key:to:)``, trailer.
    /// `version` is the entries' encoding: 3 (``HintEntryEncoder``) unless a test writes an older one.
    package static func encode(segmentID: UInt64, segmentSize: UInt64, entryCount: Int, body: [UInt8], version: UInt32 = Format.version) -> [UInt8] {
        encode(segmentID: segmentID, segmentSize: segmentSize, entryCount: entryCount, bodyParts: [body], version: version)
    }

    /// A complete hint file whose entry bytes are `bodyParts` one after the other (written into
    /// the file's bytes once, not joined first).
    package static func encode(segmentID: UInt64, segmentSize: UInt64, entryCount: Int, bodyParts: [[UInt8]], version: UInt32 = Format.version) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Format.hintHeaderSize)
        bytes.reserveCapacity(Format.hintHeaderSize + bodyParts.reduce(0) { $0 + $1.count } + Format.hintTrailerSize)
        bytes.withUnsafeMutableBytes { out in
            for (i, b) in Format.hintMagic.enumerated() { out[i] = b }
            out.put(version, at: 8)
            out.put(segmentID, at: 16)
            out.put(segmentSize, at: 24)
            out.put(UInt64(entryCount), at: 32)
            out.put(CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(out)[0..<40]))), at: 40)
        }
        var checksum: UInt32 = 0
        for part in bodyParts {
            bytes.append(contentsOf: part)
            checksum = part.withUnsafeBytes { CRC32C.checksum($0, extending: checksum) }
        }
        let crc = CRC32C.mask(checksum)
        withUnsafeBytes(of: crc.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: Format.hintEndMagic.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// The segment size a hint file's header records (nil when too short to hold one). Parsing
    /// against it (instead of the segment's current size) reads what a segment held when its hint
    /// was written, after the segment was damaged or cut.
    package static func recordedSegmentSize(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        bytes.count >= Format.hintHeaderSize ? bytes.u64(24) : nil
    }

    package enum Failure: Error, Equatable {
        case invalid(String)
        case newerVersion(UInt32)
    }

    /// Validates the whole hint file first, then calls `visit(entry, keyBytes)` for every entry.
    /// Nothing is visited unless every check passes, so a bad hint never half-fills an index.
    package static func parse(
        _ bytes: UnsafeRawBufferPointer,
        segmentID: UInt64,
        segmentSize: UInt64,
        visit: (HintEntry, UnsafeRawBufferPointer) -> Void
    ) -> Failure? {
        guard bytes.count >= Format.hintHeaderSize + Format.hintTrailerSize else { return .invalid("too short") }
        guard Array(bytes[0..<8]) == Format.hintMagic else { return .invalid("bad magic") }
        guard CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<40]))) == bytes.u32(40) else {
            return .invalid("header checksum mismatch")
        }
        let version = bytes.u32(8)
        if version > Format.version { return .newerVersion(version) }
        guard version >= Format.oldestReadableVersion else { return .invalid("version \(version)") }
        guard bytes.u64(16) == segmentID else { return .invalid("names segment \(bytes.u64(16))") }
        guard bytes.u64(24) == segmentSize else { return .invalid("segment size \(bytes.u64(24)) differs from \(segmentSize)") }
        let bodyEnd = bytes.count - Format.hintTrailerSize
        guard bytes.u32(bodyEnd + 4) == Format.hintEndMagic else { return .invalid("missing end marker") }
        let body = UnsafeRawBufferPointer(rebasing: bytes[Format.hintHeaderSize..<bodyEnd])
        guard CRC32C.mask(CRC32C.checksum(body)) == bytes.u32(bodyEnd) else { return .invalid("checksum mismatch") }
        let count = bytes.u64(32)
        return version >= 3
            ? parseCompactEntries(bytes, end: bodyEnd, count: count, segmentSize: segmentSize, visit: visit)
            : parseFixedEntries(bytes, end: bodyEnd, count: count, segmentSize: segmentSize, visit: visit)
    }

    /// Version 3: entries decoded one after the other; their records must tile the segment
    /// exactly. Nothing is visited until every entry has passed.
    private static func parseCompactEntries(
        _ bytes: UnsafeRawBufferPointer, end bodyEnd: Int, count: UInt64, segmentSize: UInt64,
        visit: (HintEntry, UnsafeRawBufferPointer) -> Void
    ) -> Failure? {
        let body = UnsafeRawBufferPointer(rebasing: bytes[0..<bodyEnd])
        var decoder = HintEntryDecoder()
        var o = Format.hintHeaderSize
        var seen: UInt64 = 0
        while o < bodyEnd {
            guard let (e, _, next) = decoder.next(body, at: o, segmentSize: segmentSize) else { return .invalid("bad entry at \(o)") }
            if let problem = entryProblem(e, at: o) { return problem }
            o = next
            seen += 1
        }
        guard seen == count else { return .invalid("entry count \(seen) differs from \(count)") }
        guard decoder.nextOffset == segmentSize || count == 0 && segmentSize <= UInt64(Format.segmentHeaderSize) else {
            return .invalid("entries end at \(decoder.nextOffset), not at the segment's end \(segmentSize)")
        }
        decoder = HintEntryDecoder()
        o = Format.hintHeaderSize
        while o < bodyEnd {
            let (e, key, next) = decoder.next(body, at: o, segmentSize: segmentSize)!
            visit(e, UnsafeRawBufferPointer(rebasing: body[key]))
            o = next
        }
        return nil
    }

    private static func entryProblem(_ e: HintEntry, at o: Int) -> Failure? {
        // A sealed pin record (format version 7) stores its seal alone: 32 bytes.
        if e.kind == .pin && (e.storedLength != 0 && e.storedLength != Format.Seal.overhead || e.originalLength != 0
                              || e.flags & ~Format.RecordFlag.pinned != 0) {
            return .invalid("pin entry at \(o) with a value or flags other than pinned")
        }
        if e.kind == .removal && (e.storedLength != 0 || e.originalLength != 0 || e.flags & ~Format.RecordFlag.tagged != 0 || e.expiry != 0) {
            return .invalid("removal entry at \(o) with a value, flags or an expiry")
        }
        return nil
    }

    /// Versions 1 and 2: fixed 52-byte entries, each naming its record's offset.
    private static func parseFixedEntries(
        _ bytes: UnsafeRawBufferPointer, end bodyEnd: Int, count: UInt64, segmentSize: UInt64,
        visit: (HintEntry, UnsafeRawBufferPointer) -> Void
    ) -> Failure? {
        let size = Format.version2HintEntrySize
        // Pass 1: structure and bounds against the segment.
        var o = Format.hintHeaderSize
        var seen: UInt64 = 0
        while o < bodyEnd {
            guard o + size <= bodyEnd, let e = entry(bytes, at: o) else { return .invalid("bad entry at \(o)") }
            guard e.keyLength > 0, e.keyLength <= Format.maximumKeyLength,
                  e.storedLength <= Format.maximumValueLength, e.originalLength <= Format.maximumValueLength,
                  e.offset >= UInt64(Format.segmentHeaderSize),
                  e.offset <= segmentSize, UInt64(e.recordSize) <= segmentSize - e.offset,   // no overflow
                  o + size + e.keyLength <= bodyEnd
            else { return .invalid("entry at \(o) out of bounds") }
            if let problem = entryProblem(e, at: o) { return problem }
            o += size + e.keyLength
            seen += 1
        }
        guard seen == count else { return .invalid("entry count \(seen) differs from \(count)") }

        // Pass 2: visit.
        o = Format.hintHeaderSize
        while o < bodyEnd {
            let e = entry(bytes, at: o)!
            visit(e, UnsafeRawBufferPointer(rebasing: bytes[(o + size)..<(o + size + e.keyLength)]))
            o += size + e.keyLength
        }
        return nil
    }

    private static func entry(_ b: UnsafeRawBufferPointer, at o: Int) -> HintEntry? {
        // Version-2 entries predate removal records (format version 5).
        guard let kind = Format.RecordKind(rawValue: b.u8(o + 40)), kind != .removal,
              Format.isPlausibleSequence(b.u64(o)) else { return nil }
        return HintEntry(
            sequence: b.u64(o), offset: b.u64(o + 8), writeTime: b.i64(o + 16), expiry: b.i64(o + 24),
            accessTime: b.i64(o + 32), kind: kind, flags: b.u8(o + 41), keyLength: Int(b.u16(o + 42)),
            storedLength: Int(b.u32(o + 44)), originalLength: Int(b.u32(o + 48)))
    }
}
