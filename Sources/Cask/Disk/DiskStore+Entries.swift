import CaskFormat

/// Cache entries: values with a fresh period and a stale window (format-spec.md, "Entry
/// header"), written by ``CaskCache``'s loader API.
extension DiskStore {
    /// Stores `value` as a cache entry fresh until `freshUntil` (ms since 1970) and kept until
    /// `expiry` (ms since 1970, the end of its stale window; the record's TTL). Plain reads
    /// answer nil once it is no longer fresh; ``withRecord(forKey:_:)`` hands it over until it
    /// expires. Returns the record's sequence number.
    /// - Throws: what ``setValue(_:forKey:timeToLive:isPinned:)`` throws.
    @discardableResult
    func putEntry(_ value: UnsafeRawBufferPointer, forKey key: String, freshUntil: Int64, expiry: Int64) throws(CaskError) -> UInt64 {
        guard value.count <= options.maximumValueSize - EntryHeader.size else {
            throw .valueTooLarge(size: value.count, maximum: options.maximumValueSize - EntryHeader.size)
        }
        let now = options.clock.now
        let ttl = Duration.milliseconds(max(1, expiry - now))
        return try withUnsafeTemporaryAllocation(byteCount: EntryHeader.size + value.count, alignment: 8) { out throws(CaskError) -> UInt64 in
            EntryHeader(freshUntil: max(1, freshUntil)).encode(into: out)
            if value.count > 0 { (out.baseAddress! + EntryHeader.size).copyMemory(from: value.baseAddress!, byteCount: value.count) }
            return try put(UnsafeRawBufferPointer(out), forKey: key, timeToLive: ttl, isPinned: false, entryFlag: true)
        }
    }
}
