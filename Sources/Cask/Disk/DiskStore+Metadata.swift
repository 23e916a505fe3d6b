import Foundation
import CaskFormat

extension DiskStore {
    /// What the store knows of `key` without reading its value, or nil when absent or expired.
    /// Not an access: LRU order does not change. The size and write date come from the record's
    /// header (one read of its first bytes; the index does not keep them), whose fields, key and
    /// sequence are checked but not its checksum, which covers the value: a read of the value
    /// checks it. A header that is not the item's is damage, reported as a read reports it
    /// (the key is removed) and answered with nil.
    /// - Throws: ``CaskError/io(operation:path:errno:)`` when the read fails, ``CaskError/closed``.
    public func metadata(forKey key: String) throws(CaskError) -> ItemMetadata? {
        let now = options.clock.now
        let found = try withUTF8(key) { keyBytes throws(CaskError) in
            try checkKeyLength(keyBytes)
            return try state.withLock { s throws(CaskError) -> (IndexEntry, RecordHeaderReader)? in
                guard !s.isClosed else { throw .closed }
                guard let e = s.index.entry(forKey: keyBytes),
                      StoreState.goneCause(e, now: now, ageLimit: s.ageLimitMilliseconds) == nil else { return nil }
                return (e, try RecordHeaderReader(s, for: e))
            }
        }
        guard let (entry, reader) = found else { return nil }
        return try metadata(key, entry, reader)
    }

    /// Metadata of all live, unexpired items, in no particular order. O(n): the items of the
    /// moment of the call, their headers read afterwards without the store's lock (see
    /// ``metadata(forKey:)``; a damaged item is left out).
    /// - Throws: ``CaskError/io(operation:path:errno:)`` when a read fails, ``CaskError/closed``.
    public func allMetadata() throws(CaskError) -> [ItemMetadata] {
        let (index, order, reader) = try snapshot(sortedByKey: false)
        var items: [ItemMetadata] = []
        items.reserveCapacity(order.count)
        for n in order {
            let entry = index.entry(at: Int(n))
            if let m = try metadata(index.key(of: entry), entry, reader) { items.append(m) }
        }
        return items
    }

    /// Calls `body` with the metadata of every live item, in ascending order of the keys' UTF-8
    /// bytes, one at a time: nothing is built for all items but their order (4 bytes each), so
    /// listing a large store costs little memory beyond the index. The items are those of the
    /// moment of the call; the store may change meanwhile (the store's lock is not held while
    /// `body` runs). Not an access. Stops early when `body` returns false.
    /// - Throws: ``CaskError/io(operation:path:errno:)`` when reading a record's header fails,
    ///   ``CaskError/closed``.
    public func forEachItemInKeyOrder(_ body: (ItemMetadata) -> Bool) throws(CaskError) {
        let (index, order, reader) = try snapshot(sortedByKey: true)
        for n in order {
            let entry = index.entry(at: Int(n))
            guard let m = try metadata(index.key(of: entry), entry, reader) else { continue }
            guard body(m) else { return }
        }
    }

    /// The index as it is now, the numbers of its live entries (in key order when asked) and a
    /// reader for their headers.
    private func snapshot(sortedByKey: Bool) throws(CaskError) -> (KeyIndex, [Int32], RecordHeaderReader) {
        let now = options.clock.now
        let (index, age, reader) = try state.withLock { s throws(CaskError) in
            guard !s.isClosed else { throw .closed }
            return (s.index, s.ageLimitMilliseconds, try RecordHeaderReader(everyRecordIn: s))
        }
        let live = { (e: IndexEntry) in StoreState.goneCause(e, now: now, ageLimit: age) == nil }
        if sortedByKey { return (index, index.entryNumbersSortedByKey(where: live), reader) }
        return (index, index.entries.indices.filter { live(index.entry(at: $0)) }.map { Int32($0) }, reader)
    }

    /// The metadata of `key`'s record `entry`, its header read by `reader`; nil (the damage
    /// reported) when the header is not the record's.
    private func metadata(_ key: String, _ e: IndexEntry, _ reader: RecordHeaderReader) throws(CaskError) -> ItemMetadata? {
        guard let h = try withUTF8(key, { k throws(CaskError) in try reader.header(of: e, key: k) }) else {
            try reportDamage(key: key, entry: e, file: FileNames.join(directory, FileNames.segment(e.segment)))
            return nil
        }
        // A tagged entry's header has no fixed size: its value is read (and checked) for it.
        var tagged: (size: Int, tags: [String], staleWindow: Bool)?
        if h.isTagged {
            tagged = try withRecord(forKey: key, usedAt: nil) { v, entry, header in
                (v.count, header?.tags.map { String(decoding: $0, as: UTF8.self) } ?? [],
                 header.map { entry.expiry == 0 || $0.freshUntil < entry.expiry } ?? false)
            }
            if tagged == nil { return nil }
        }
        var m = ItemMetadata(
            key: key, size: tagged?.size ?? h.originalLength - (h.isEntry ? EntryHeader.size : 0), storedSize: Int(e.storedLength),
            isCompressed: e.isCompressed, writeDate: Date(milliseconds: h.writeTime), accessDate: Date(milliseconds: e.accessTime),
            expirationDate: e.expiry == 0 ? nil : Date(milliseconds: e.expiry), isPinned: e.isPinned, hasStaleWindow: tagged?.staleWindow ?? h.isEntry)
        m.tags = tagged?.tags ?? []
        return m
    }
}
