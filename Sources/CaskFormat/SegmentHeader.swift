/// The 48-byte header at the start of every segment file. Layout: format-spec.md, "Segment header".
package struct SegmentHeader: Sendable, Equatable {
    package var id: UInt64
    package var kind: Format.SegmentKind
    package var flags: UInt8
    /// Log segments: the first sequence number that may appear. Compacted: the smallest inside.
    package var minimumSequence: UInt64
    /// Compacted segments: an exclusive upper bound on the sequence numbers inside. Log: 0.
    package var sequenceLimit: UInt64
    /// The id of the key the segment's records are sealed with (format version 7); 0 for a
    /// segment of unsealed records (versions 1 to 6).
    package var keyID: UInt32

    package init(id: UInt64, kind: Format.SegmentKind, flags: UInt8, minimumSequence: UInt64, sequenceLimit: UInt64,
                 keyID: UInt32 = 0) {
        self.id = id
        self.kind = kind
        self.flags = flags
        self.minimumSequence = minimumSequence
        self.sequenceLimit = sequenceLimit
        self.keyID = keyID
    }

    /// The version this header is written with: ``Format/sealedVersion`` (8) with a key id, else
    /// ``Format/version``. (Version-7 headers are read, never written.)
    package var version: UInt32 { keyID == 0 ? Format.version : Format.sealedVersion }

    /// Where the header checksum lies for `version`; it covers every byte before it.
    private static func checksumOffset(_ version: UInt32) -> Int { version >= Format.firstSealedVersion ? 44 : 40 }

    package var clearsOlder: Bool { flags & Format.SegmentFlag.clearsOlder != 0 }

    package func encoded() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Format.segmentHeaderSize)
        bytes.withUnsafeMutableBytes { out in
            for (i, b) in Format.segmentMagic.enumerated() { out[i] = b }
            out.put(version, at: 8)
            out.put(kind.rawValue, at: 12)
            out.put(flags, at: 13)
            out.put(id, at: 16)
            out.put(minimumSequence, at: 24)
            out.put(sequenceLimit, at: 32)
            if keyID != 0 { out.put(keyID, at: 40) }
            let end = Self.checksumOffset(version)
            let crc = CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(out)[0..<end])))
            out.put(crc, at: end)
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
        let version = bytes.u32(8)
        let end = checksumOffset(version)
        let crc = CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<end])))
        guard magicMatches, crc == bytes.u32(end) else { return .damaged(magicMatches: magicMatches) }
        if version > Format.newestReadableVersion { return .newerVersion(version) }
        let keyID = version >= Format.firstSealedVersion ? bytes.u32(40) : 0
        guard version >= Format.oldestReadableVersion, let kind = Format.SegmentKind(rawValue: bytes.u8(12)),
              bytes.u8(13) & ~Format.SegmentFlag.known == 0, version < Format.firstSealedVersion || keyID != 0,
              bytes.u64(16) <= UInt64(UInt32.max), Format.isPlausibleSequence(bytes.u64(24)),
              bytes.u64(32) <= Format.maximumSequence + 1
        else { return .damaged(magicMatches: true) }
        return .valid(SegmentHeader(
            id: bytes.u64(16), kind: kind, flags: bytes.u8(13),
            minimumSequence: bytes.u64(24), sequenceLimit: bytes.u64(32), keyID: keyID))
    }
}
