import CaskFormat

/// Cache entries: values with a fresh period and a stale window (format-spec.md, "Entry
/// header"), written by ``CaskCache``'s loader API, with the tags that
/// ``DiskStore/removeValues(taggedWith:)`` removes them by.
extension DiskStore {
    /// Stores `value` as a cache entry fresh until `freshUntil` (ms since 1970) and kept until
    /// `expiry` (ms since 1970, the end of its stale window; the record's TTL), listing `tags`
    /// (each 1 to 255 UTF-8 bytes, at most 64, duplicates written once). Plain reads answer nil
    /// once it is no longer fresh; ``withRecord(forKey:_:)`` hands it over until it expires.
    /// Returns the record's sequence number, nil when the frequency-aware policy declined it.
    /// - Throws: what ``setValue(_:forKey:timeToLive:isPinned:)`` throws, and
    ///   ``CaskError/invalidOption(_:)`` for a tag out of range.
    @discardableResult
    package func putEntry(_ value: UnsafeRawBufferPointer, forKey key: String, freshUntil: Int64, expiry: Int64, tags: [String] = []) throws(CaskError) -> UInt64? {
        try writeEntry(value, forKey: key, freshUntil: freshUntil, expiry: expiry, tags: tags)?.sequence
    }

    /// ``putEntry(_:forKey:freshUntil:expiry:tags:)``, returning the index entry it wrote.
    func writeEntry(_ value: UnsafeRawBufferPointer, forKey key: String, freshUntil: Int64, expiry: Int64, tags: [String] = []) throws(CaskError) -> IndexEntry? {
        let header = EntryHeader(freshUntil: max(1, freshUntil), tags: try Self.checkedTags(tags))
        guard value.count <= options.maximumValueSize - header.encodedSize else {
            throw .valueTooLarge(size: value.count, maximum: options.maximumValueSize - header.encodedSize)
        }
        let ttl = Duration.milliseconds(max(1, expiry - options.clock.now))
        return try put(value, forKey: key, timeToLive: ttl, isPinned: false, entry: header)
    }

    /// `tags` as an entry header lists them: their UTF-8 bytes, each once, in the order given.
    /// - Throws: ``CaskError/invalidOption(_:)`` for an empty tag, one over 255 bytes, or more
    ///   than 64 tags.
    static func checkedTags(_ tags: [String]) throws(CaskError) -> [[UInt8]] {
        var seen = Set<String>()
        var out: [[UInt8]] = []
        for tag in tags where seen.insert(tag).inserted {
            try checkTag(tag)
            out.append(Array(tag.utf8))
        }
        guard out.count <= EntryHeader.maximumTags else {
            throw .invalidOption("an entry lists at most \(EntryHeader.maximumTags) tags (got \(out.count))")
        }
        return out
    }

    /// Throws ``CaskError/invalidOption(_:)`` unless `tag` is 1 to 255 UTF-8 bytes.
    static func checkTag(_ tag: String) throws(CaskError) {
        guard (1...EntryHeader.maximumTagLength) ~= tag.utf8.count else {
            throw .invalidOption("a tag is 1 to \(EntryHeader.maximumTagLength) bytes of UTF-8 (got \(tag.utf8.count) bytes)")
        }
    }
}
