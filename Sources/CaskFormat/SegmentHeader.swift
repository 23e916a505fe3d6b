/// The 48-byte header at the start of every segment file. Layout: format-spec.md, "Segment header".
package struct SegmentHeader: Sendable, Equatable {
    package var id: UInt64
    package var kind: Format.SegmentKind
    package var flags: UInt8
    /// Log segments: the first sequence number that may appear. Compacted: the smallest inside.
    package var minimumSequence: UInt64
    /// Compacted segments: an exclusive upper bound on the sequence numbers inside. Log: 0.
    package var sequenceLimit: UInt64

    package init(id: UInt64, kind: Format.SegmentKind, flags: UInt8, minimumSequence: UInt64, sequenceLimit: UInt64) {
        self.id = id
        self.kind = kind
        self.flags = flags
        self.minimumSequence = minimumSequence
        self.sequenceLimit = sequenceLimit
    }

    package var clearsOlder: Bool { flags & Format.SegmentFlag.clearsOlder != 0 }

    package func encoded() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Format.segmentHeaderSize)
        bytes.withUnsafeMutableBytes { out in
            for (i, b) in Format.segmentMagic.enumerated() { out[i] = b }
            out.put(Format.version, at: 8)
            out.put(kind.rawValue, at: 12)
            out.put(flags, at: 13)
            out.put(id, at: 16)
            out.put(minimumSequence, at: 24)
            out.put(sequenceLimit, at: 32)
            let crc = CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(out)[0..<40])))
            out.put(crc, at: 40)
        }
        return bytes
    }

    package enum Parsed {
        case valid(SegmentHeader)
        /// Checksum or structure failed; the magic may or may not match.
        case damaged(magicMatches: Bool)
        /// A well-formed header of a newer version.
        case newerVersion(UInt32)
    }

    package static func parse(_ bytes: UnsafeRawBufferPointer) -> Parsed {
        guard bytes.count >= Format.segmentHeaderSize else {
            let n = min(bytes.count, 8)
            return .damaged(magicMatches: n > 0 && Array(bytes[0..<n]) == Array(Format.segmentMagic[0..<n]))
        }
        let magicMatches = Array(bytes[0..<8]) == Format.segmentMagic
        let crc = CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<40])))
        guard magicMatches, crc == bytes.u32(40) else { return .damaged(magicMatches: magicMatches) }
        let version = bytes.u32(8)
        if version > Format.version { return .newerVersion(version) }
        guard version >= Format.oldestReadableVersion, let kind = Format.SegmentKind(rawValue: bytes.u8(12)),
              bytes.u8(13) & ~Format.SegmentFlag.known == 0 else { return .damaged(magicMatches: true) }
        return .valid(SegmentHeader(
            id: bytes.u64(16), kind: kind, flags: bytes.u8(13),
            minimumSequence: bytes.u64(24), sequenceLimit: bytes.u64(32)))
    }
}
