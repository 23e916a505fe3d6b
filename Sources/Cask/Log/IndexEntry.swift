import CaskFormat

/// Where the newest record of a key lies and what is known of it: 48 bytes, all fields packed
/// without padding beyond the last byte.
///
/// The access time (LRU order, the age limit, `trim(toDate:)`) and the expiry (TTL) keep full
/// milliseconds since the Unix epoch in 48 bits each (good until the year 10889; larger values
/// are clamped, which for an expiry means "never within this format's range"). The write time,
/// only reported, is kept to the second since ``IndexEntry/epochMilliseconds`` (2020-01-01).
struct IndexEntry: Sendable {
    private var sequenceLow: UInt32
    private var sequenceHigh: UInt32
    var segment: UInt32
    /// Offset of the record's first byte in its segment.
    var offset: UInt32
    var storedLength: UInt32
    var originalLength: UInt32
    /// Where the key's bytes start in the index's key arena (set by ``KeyIndex``).
    var keyOffset: UInt32 = 0
    private var expiryLow: UInt32
    private var accessLow: UInt32
    private var writeSeconds: UInt32
    private var expiryHigh: UInt16
    private var accessHigh: UInt16
    var keyLength: UInt16
    /// Record flags (compressed, pinned) plus ``IndexEntry/tombstoneFlag`` while loading.
    var flags: UInt8

    /// 2020-01-01T00:00:00Z in milliseconds since the Unix epoch.
    static let epochMilliseconds: Int64 = 1_577_836_800_000
    /// The largest time (ms since the Unix epoch) an entry holds: 2^48 - 1.
    static let maximumTime: Int64 = (1 << 48) - 1
    /// Marks a tombstone kept in the index during open, so older records lose to it.
    static let tombstoneFlag: UInt8 = 0x80

    init(segment: UInt32, offset: UInt32, storedLength: UInt32, originalLength: UInt32, sequence: UInt64,
         writeTime: Int64, expiry: Int64, accessTime: Int64, flags: UInt8, keyLength: UInt16) {
        self.sequenceLow = UInt32(truncatingIfNeeded: sequence)
        self.sequenceHigh = UInt32(truncatingIfNeeded: sequence >> 32)
        self.segment = segment
        self.offset = offset
        self.storedLength = storedLength
        self.originalLength = originalLength
        let e = Self.clamped(expiry), a = Self.clamped(accessTime)
        self.expiryLow = UInt32(truncatingIfNeeded: e)
        self.expiryHigh = UInt16(truncatingIfNeeded: e >> 32)
        self.accessLow = UInt32(truncatingIfNeeded: a)
        self.accessHigh = UInt16(truncatingIfNeeded: a >> 32)
        self.writeSeconds = UInt32(clamping: max(0, (writeTime - Self.epochMilliseconds) / 1000))
        self.keyLength = keyLength
        self.flags = flags
    }

    @inline(__always)
    private static func clamped(_ milliseconds: Int64) -> UInt64 {
        UInt64(min(max(0, milliseconds), maximumTime))
    }

    var sequence: UInt64 { UInt64(sequenceHigh) << 32 | UInt64(sequenceLow) }
    /// Milliseconds since the Unix epoch; 0 = never.
    var expiry: Int64 { Int64(UInt64(expiryHigh) << 32 | UInt64(expiryLow)) }
    /// Milliseconds since the Unix epoch, to the second.
    var writeTime: Int64 { Self.epochMilliseconds + Int64(writeSeconds) * 1000 }
    /// Milliseconds since the Unix epoch of the last read or write.
    var accessTime: Int64 {
        get { Int64(UInt64(accessHigh) << 32 | UInt64(accessLow)) }
        set {
            let a = Self.clamped(newValue)
            accessLow = UInt32(truncatingIfNeeded: a)
            accessHigh = UInt16(truncatingIfNeeded: a >> 32)
        }
    }

    var isTombstone: Bool { flags & Self.tombstoneFlag != 0 }
    var isPinned: Bool { flags & Format.RecordFlag.pinned != 0 }
    var isCompressed: Bool { flags & Format.RecordFlag.compressed != 0 }
    /// Bytes the record occupies on disk.
    var recordSize: Int { RecordCodec.encodedSize(keyLength: Int(keyLength), storedLength: Int(storedLength)) }

    /// True when the item's TTL has run out at `now` (pinned items never expire).
    @inline(__always)
    func isExpired(at now: Int64) -> Bool {
        let e = expiry
        return e != 0 && now >= e && !isPinned
    }
}
