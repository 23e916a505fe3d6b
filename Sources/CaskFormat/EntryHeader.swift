/// The header a cache entry's value starts with (record flag ``Format/RecordFlag/entry``,
/// format version 4): when the entry stops being fresh, and (header version 2, record flag
/// ``Format/RecordFlag/tagged``, format version 6) the tags it was written with. Layout:
/// format-spec.md, "Entry header".
///
/// An entry written through the cache's loader API has a fresh period, then a stale window,
/// then it is gone. The record's `expiry` is the end of the stale window (the store drops the
/// item then, as for any TTL); this header holds the end of the fresh period, so that a stale
/// value survives a restart and is still known to be stale.
package struct EntryHeader: Sendable, Equatable {
    /// Bytes the header takes without tags (version 1), and its fixed part in version 2.
    package static let size = 9
    /// The header version without tags.
    package static let version: UInt8 = 1
    /// The header version with tags.
    package static let taggedVersion: UInt8 = 2
    /// The most tags one entry lists.
    package static let maximumTags = 64
    /// The longest tag, in UTF-8 bytes.
    package static let maximumTagLength = 255
    /// The fewest bytes a tagged header takes: one tag of one byte.
    package static let taggedMinimumSize = size + 3

    /// Milliseconds since the Unix epoch when the entry stops being fresh (> 0).
    package var freshUntil: Int64
    /// The entry's tags (each 1 ... ``maximumTagLength`` bytes), in the order written; empty
    /// for a version-1 header.
    package var tags: [[UInt8]]

    package init(freshUntil: Int64, tags: [[UInt8]] = []) {
        self.freshUntil = freshUntil
        self.tags = tags
    }

    /// Bytes the header takes before the app's bytes.
    package var encodedSize: Int {
        tags.isEmpty ? Self.size : Self.size + 1 + tags.reduce(0) { $0 + 1 + $1.count }
    }

    /// Writes the header into the first ``encodedSize`` bytes of `out`. The tags must be in
    /// range (the caller checked them).
    package func encode(into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= encodedSize && tags.count <= Self.maximumTags)
        out.put(tags.isEmpty ? Self.version : Self.taggedVersion, at: 0)
        out.put(freshUntil, at: 1)
        guard !tags.isEmpty else { return }
        out.put(UInt8(tags.count), at: Self.size)
        var o = Self.size + 1
        for tag in tags {
            precondition((1...Self.maximumTagLength) ~= tag.count)
            out.put(UInt8(tag.count), at: o)
            tag.withUnsafeBytes { (out.baseAddress! + o + 1).copyMemory(from: $0.baseAddress!, byteCount: tag.count) }
            o += 1 + tag.count
        }
    }

    /// The header at the start of `value`, or nil when the bytes are not one (too short, an
    /// unknown version, a time that is not positive, tags that do not fit or are empty): a
    /// structure error, damage like a checksum mismatch, since the bytes were read and checked.
    package static func decode(_ value: UnsafeRawBufferPointer) -> EntryHeader? {
        guard value.count >= size, value.u8(0) == version || value.u8(0) == taggedVersion else { return nil }
        let freshUntil = value.i64(1)
        guard freshUntil > 0 else { return nil }
        guard value.u8(0) == taggedVersion else { return EntryHeader(freshUntil: freshUntil) }
        guard value.count > size else { return nil }
        let count = Int(value.u8(size))
        guard (1...maximumTags) ~= count else { return nil }
        var tags: [[UInt8]] = []
        tags.reserveCapacity(count)
        var o = size + 1
        for _ in 0..<count {
            guard o < value.count else { return nil }
            let length = Int(value.u8(o))
            guard length > 0, value.count - o - 1 >= length else { return nil }
            tags.append(Array(value[(o + 1)..<(o + 1 + length)]))
            o += 1 + length
        }
        return EntryHeader(freshUntil: freshUntil, tags: tags)
    }

    /// Whether this header suits a record with (or without) ``Format/RecordFlag/tagged``:
    /// a tagged record's header lists tags, an untagged one's lists none.
    package func matches(taggedFlag: Bool) -> Bool { tags.isEmpty != taggedFlag }
}
