import CaskFormat

/// Where the newest record of a key lies and what is known of it, as ``KeyIndex`` hands it out.
/// The index keeps it in 32 bytes (``StoredIndexEntry``), the expiry aside.
///
/// The access time (LRU order, the age limit, `trim(toDate:)`) and the expiry (TTL) are full
/// milliseconds since the Unix epoch clamped to 48 bits (good until the year 10889; a larger
/// expiry means "never within this format's range"). The value's original length and its write
/// time are not kept: they are in the record's header (``DiskStore/metadata(forKey:)`` reads it).
struct IndexEntry: Sendable, Equatable {
    var sequence: UInt64
    var segment: UInt32
    /// Offset of the record's first byte in its segment.
    var offset: UInt32
    var storedLength: UInt32
    /// Where the key's bytes start in the index's key arena (set by ``KeyIndex``).
    var keyOffset: UInt32 = 0
    /// Milliseconds since the Unix epoch; 0 = never.
    private(set) var expiry: Int64
    private var access: Int64
    /// At most ``Format/maximumKeyLength``.
    var keyLength: UInt16
    /// Record flags (compressed, pinned) plus ``IndexEntry/tombstoneFlag`` while loading.
    var flags: UInt8
    /// The ``KeyStore`` arena holding the key (set by ``KeyIndex``).
    var keyArena: UInt8 = 0

    /// 2020-01-01T00:00:00Z in milliseconds since the Unix epoch.
    static let epochMilliseconds: Int64 = 1_577_836_800_000
    /// The largest time (ms since the Unix epoch) an entry holds: 2^48 - 1.
    static let maximumTime: Int64 = (1 << 48) - 1
    /// Marks a tombstone kept in the index during open, so older records lose to it.
    static let tombstoneFlag: UInt8 = 0x80

    init(segment: UInt32, offset: UInt32, storedLength: UInt32, sequence: UInt64,
         expiry: Int64, accessTime: Int64, flags: UInt8, keyLength: UInt16) {
        self.sequence = sequence
        self.segment = segment
        self.offset = offset
        self.storedLength = storedLength
        self.expiry = Self.clamped(expiry)
        self.access = Self.clamped(accessTime)
        self.keyLength = keyLength
        self.flags = flags
    }

    @inline(__always)
    /// A record's expiry as the index keeps it (clamped to 48 bits).
    static func indexExpiry(_ milliseconds: Int64) -> Int64 { clamped(milliseconds) }

    private static func clamped(_ milliseconds: Int64) -> Int64 {
        min(max(0, milliseconds), maximumTime)
    }

    /// Milliseconds since the Unix epoch of the last read or write.
    var accessTime: Int64 {
        get { access }
        set { access = Self.clamped(newValue) }
    }

    var isTombstone: Bool { flags & Self.tombstoneFlag != 0 }
    var isPinned: Bool { flags & Format.RecordFlag.pinned != 0 }
    var isCompressed: Bool { flags & Format.RecordFlag.compressed != 0 }
    /// Bytes the record occupies on disk.
    var recordSize: Int { RecordCodec.encodedSize(keyLength: Int(keyLength), storedLength: Int(storedLength)) }

    /// True when the item's TTL has run out at `now` (pinned items never expire).
    @inline(__always)
    func isExpired(at now: Int64) -> Bool {
        expiry != 0 && now >= expiry && !isPinned
    }
}
