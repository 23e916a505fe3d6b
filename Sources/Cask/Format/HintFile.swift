/// One entry of a hint file: where a record lies in its segment and what the index needs of it.
struct HintEntry: Sendable {
    var sequence: UInt64
    var offset: UInt64
    var writeTime: Int64
    var expiry: Int64
    var accessTime: Int64
    var kind: Format.RecordKind
    var flags: UInt8
    var keyLength: Int
    var storedLength: Int
    var originalLength: Int

    var recordSize: Int { RecordCodec.encodedSize(keyLength: keyLength, storedLength: storedLength) }
}

/// Reads and writes hint files (`<id>.hint`): a sealed segment's index entries, so that open need
/// not read the segment. Layout: format-spec.md, "Hint file". A hint file is only an optimisation:
/// any doubt about it (checksum, lengths, a segment size that differs) means the segment is scanned.
enum HintFile {
    /// Serialises `entries` (each with its key bytes) for the segment `segmentID` of `segmentSize` bytes.
    static func encode(segmentID: UInt64, segmentSize: UInt64, entries: [(HintEntry, [UInt8])]) -> [UInt8] {
        let body = entries.reduce(0) { $0 + Format.hintEntrySize + $1.1.count }
        var bytes = [UInt8](repeating: 0, count: Format.hintHeaderSize + body + Format.hintTrailerSize)
        bytes.withUnsafeMutableBytes { out in
            for (i, b) in Format.hintMagic.enumerated() { out[i] = b }
            out.put(Format.version, at: 8)
            out.put(segmentID, at: 16)
            out.put(segmentSize, at: 24)
            out.put(UInt64(entries.count), at: 32)
            out.put(CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(out)[0..<40]))), at: 40)
            var o = Format.hintHeaderSize
            for (e, key) in entries {
                out.put(e.sequence, at: o)
                out.put(e.offset, at: o + 8)
                out.put(e.writeTime, at: o + 16)
                out.put(e.expiry, at: o + 24)
                out.put(e.accessTime, at: o + 32)
                out.put(e.kind.rawValue, at: o + 40)
                out.put(e.flags, at: o + 41)
                out.put(UInt16(e.keyLength), at: o + 42)
                out.put(UInt32(e.storedLength), at: o + 44)
                out.put(UInt32(e.originalLength), at: o + 48)
                o += Format.hintEntrySize
                for (i, b) in key.enumerated() { out[o + i] = b }
                o += key.count
            }
            let crc = CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(out)[Format.hintHeaderSize..<o])))
            out.put(crc, at: o)
            out.put(Format.hintEndMagic, at: o + 4)
        }
        return bytes
    }

    enum Failure: Error, Equatable {
        case invalid(String)
        case newerVersion(UInt32)
    }

    /// Validates the whole hint file first, then calls `visit(entry, keyBytes)` for every entry.
    /// Nothing is visited unless every check passes, so a bad hint never half-fills an index.
    static func parse(
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
        guard bytes.u64(16) == segmentID else { return .invalid("names segment \(bytes.u64(16))") }
        guard bytes.u64(24) == segmentSize else { return .invalid("segment size \(bytes.u64(24)) differs from \(segmentSize)") }
        let bodyEnd = bytes.count - Format.hintTrailerSize
        guard bytes.u32(bodyEnd + 4) == Format.hintEndMagic else { return .invalid("missing end marker") }
        let body = UnsafeRawBufferPointer(rebasing: bytes[Format.hintHeaderSize..<bodyEnd])
        guard CRC32C.mask(CRC32C.checksum(body)) == bytes.u32(bodyEnd) else { return .invalid("checksum mismatch") }
        let count = bytes.u64(32)

        // Pass 1: structure and bounds against the segment.
        var o = Format.hintHeaderSize
        var seen: UInt64 = 0
        while o < bodyEnd {
            guard o + Format.hintEntrySize <= bodyEnd, let e = entry(bytes, at: o) else { return .invalid("bad entry at \(o)") }
            guard e.keyLength > 0, e.keyLength <= Format.maximumKeyLength,
                  e.storedLength <= Format.maximumValueLength, e.originalLength <= Format.maximumValueLength,
                  e.offset >= UInt64(Format.segmentHeaderSize),
                  e.offset + UInt64(e.recordSize) <= segmentSize,
                  o + Format.hintEntrySize + e.keyLength <= bodyEnd
            else { return .invalid("entry at \(o) out of bounds") }
            o += Format.hintEntrySize + e.keyLength
            seen += 1
        }
        guard seen == count else { return .invalid("entry count \(seen) differs from \(count)") }

        // Pass 2: visit.
        o = Format.hintHeaderSize
        while o < bodyEnd {
            let e = entry(bytes, at: o)!
            let key = UnsafeRawBufferPointer(rebasing: bytes[(o + Format.hintEntrySize)..<(o + Format.hintEntrySize + e.keyLength)])
            visit(e, key)
            o += Format.hintEntrySize + e.keyLength
        }
        return nil
    }

    private static func entry(_ b: UnsafeRawBufferPointer, at o: Int) -> HintEntry? {
        guard let kind = Format.RecordKind(rawValue: b.u8(o + 40)) else { return nil }
        return HintEntry(
            sequence: b.u64(o), offset: b.u64(o + 8), writeTime: b.i64(o + 16), expiry: b.i64(o + 24),
            accessTime: b.i64(o + 32), kind: kind, flags: b.u8(o + 41), keyLength: Int(b.u16(o + 42)),
            storedLength: Int(b.u32(o + 44)), originalLength: Int(b.u32(o + 48)))
    }
}
