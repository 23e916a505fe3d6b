import CaskFormat

/// An ``IndexEntry`` as ``KeyIndex`` keeps it: 32 bytes, the expiry aside (most items have
/// none). The access time keeps 48 bits; the key length (at most 1,024, 11 bits) shares a
/// 16-bit field with the compressed, pinned, tombstone and tagged flags.
struct StoredIndexEntry: Sendable {
    private(set) var sequence: UInt64
    private var segment: UInt32
    private var offset: UInt32
    private var storedLength: UInt32
    private(set) var keyOffset: UInt32
    private var accessLow: UInt32
    private var accessHigh: UInt16
    /// Bits 0-10 the key length, 11 compressed, 12 pinned, 13 tombstone, 14 tagged (a cache
    /// entry that lists tags: ``DiskStore/removeValues(taggedWith:)`` reads its record), 15 the
    /// ``KeyStore`` arena holding the key.
    private var keyLengthAndFlags: UInt16

    private static let compressedBit: UInt16 = 1 << 11
    private static let pinnedBit: UInt16 = 1 << 12
    private static let tombstoneBit: UInt16 = 1 << 13
    private static let taggedBit: UInt16 = 1 << 14
    private static let arenaBit: UInt16 = 1 << 15
    private static let keyLengthMask: UInt16 = (1 << 11) - 1

    init(_ e: IndexEntry) {
        sequence = e.sequence
        segment = e.segment
        offset = e.offset
        storedLength = e.storedLength
        keyOffset = e.keyOffset
        let a = UInt64(e.accessTime)
        accessLow = UInt32(truncatingIfNeeded: a)
        accessHigh = UInt16(truncatingIfNeeded: a >> 32)
        var bits = e.keyLength & Self.keyLengthMask
        if e.flags & Format.RecordFlag.compressed != 0 { bits |= Self.compressedBit }
        if e.flags & Format.RecordFlag.pinned != 0 { bits |= Self.pinnedBit }
        if e.flags & IndexEntry.tombstoneFlag != 0 { bits |= Self.tombstoneBit }
        if e.flags & Format.RecordFlag.tagged != 0 { bits |= Self.taggedBit }
        if e.keyArena != 0 { bits |= Self.arenaBit }
        keyLengthAndFlags = bits
    }

    /// The entry, with `expiry` (kept aside by the index).
    @inline(__always)
    func entry(expiry: Int64) -> IndexEntry {
        var flags: UInt8 = 0
        if keyLengthAndFlags & Self.compressedBit != 0 { flags |= Format.RecordFlag.compressed }
        if keyLengthAndFlags & Self.pinnedBit != 0 { flags |= Format.RecordFlag.pinned }
        if keyLengthAndFlags & Self.tombstoneBit != 0 { flags |= IndexEntry.tombstoneFlag }
        if keyLengthAndFlags & Self.taggedBit != 0 { flags |= Format.RecordFlag.tagged }
        var e = IndexEntry(segment: segment, offset: offset, storedLength: storedLength, sequence: sequence, expiry: expiry,
                           accessTime: Int64(UInt64(accessHigh) << 32 | UInt64(accessLow)), flags: flags, keyLength: keyLength)
        e.keyOffset = keyOffset
        e.keyArena = UInt8(keyArena)
        return e
    }

    var keyLength: UInt16 { keyLengthAndFlags & Self.keyLengthMask }

    /// The ``KeyStore`` arena (0 or 1) holding the key.
    var keyArena: Int { keyLengthAndFlags & Self.arenaBit == 0 ? 0 : 1 }

    /// Notes that the key now lies at `offset` in `arena`.
    mutating func moveKey(to offset: UInt32, arena: Int) {
        keyOffset = offset
        keyLengthAndFlags = arena == 0 ? keyLengthAndFlags & ~Self.arenaBit : keyLengthAndFlags | Self.arenaBit
    }
}
