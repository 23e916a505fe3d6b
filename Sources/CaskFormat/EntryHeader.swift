/// The header a cache entry's value starts with (record flag ``Format/RecordFlag/entry``,
/// format version 4): when the entry stops being fresh. Layout: format-spec.md, "Entry header".
///
/// An entry written through the cache's loader API has a fresh period, then a stale window,
/// then it is gone. The record's `expiry` is the end of the stale window (the store drops the
/// item then, as for any TTL); this header holds the end of the fresh period, so that a stale
/// value survives a restart and is still known to be stale.
package struct EntryHeader: Sendable, Equatable {
    /// Bytes the header takes at the start of the value (before compression).
    package static let size = 9
    /// The only header version this build writes and reads.
    package static let version: UInt8 = 1

    /// Milliseconds since the Unix epoch when the entry stops being fresh (> 0).
    package var freshUntil: Int64

    package init(freshUntil: Int64) { self.freshUntil = freshUntil }

    /// Writes the header into the first ``size`` bytes of `out`.
    package func encode(into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= Self.size)
        out.put(Self.version, at: 0)
        out.put(freshUntil, at: 1)
    }

    /// The header at the start of `value`, or nil when the bytes are not one (too short, an
    /// unknown version, a time that is not positive): a structure error, damage like a
    /// checksum mismatch, since the bytes were read and checked.
    package static func decode(_ value: UnsafeRawBufferPointer) -> EntryHeader? {
        guard value.count >= size, value.u8(0) == version else { return nil }
        let freshUntil = value.i64(1)
        return freshUntil > 0 ? EntryHeader(freshUntil: freshUntil) : nil
    }
}
