/// Where the newest record of a key lies and what is known of it. 56 bytes.
struct IndexEntry: Sendable {
    var segment: UInt32
    /// Offset of the record's first byte in its segment.
    var offset: UInt32
    var storedLength: UInt32
    var originalLength: UInt32
    var sequence: UInt64
    /// Milliseconds since the Unix epoch.
    var writeTime: Int64
    /// Milliseconds since the Unix epoch; 0 = never.
    var expiry: Int64
    /// Milliseconds since the Unix epoch of the last read or write.
    var accessTime: Int64
    /// Record flags (compressed, pinned) plus ``IndexEntry/tombstoneFlag`` while loading.
    var flags: UInt8
    var keyLength: UInt16

    /// Marks a tombstone kept in the index during open, so older records lose to it.
    static let tombstoneFlag: UInt8 = 0x80

    var isTombstone: Bool { flags & Self.tombstoneFlag != 0 }
    var isPinned: Bool { flags & Format.RecordFlag.pinned != 0 }
    var isCompressed: Bool { flags & Format.RecordFlag.compressed != 0 }
    /// Bytes the record occupies on disk.
    var recordSize: Int { RecordCodec.encodedSize(keyLength: Int(keyLength), storedLength: Int(storedLength)) }

    /// True when the item's TTL has run out at `now` (pinned items never expire).
    @inline(__always)
    func isExpired(at now: Int64) -> Bool { expiry != 0 && now >= expiry && !isPinned }
}
