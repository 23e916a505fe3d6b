import CaskFormat

/// The write path every value takes: encode (``ValueCodec``), append under the lock, install
/// in the index, and for ``Durability/everyWrite`` wait for the group commit.
extension DiskStore {
    /// Appends the value's record and installs it; returns the index entry it wrote (its
    /// sequence number, where it lies, its expiry, as the index keeps them). With `entry`, the
    /// value is a cache entry and the header goes in front of it
    /// (``putEntry(_:forKey:freshUntil:expiry:tags:)``).
    @discardableResult
    func put(_ value: UnsafeRawBufferPointer, forKey key: String, timeToLive: Duration?, isPinned: Bool,
             entry: EntryHeader? = nil) throws(CaskError) -> IndexEntry {
        try requireWritable()
        guard value.count <= options.maximumValueSize else {
            throw .valueTooLarge(size: value.count, maximum: options.maximumValueSize)
        }
        if let timeToLive, timeToLive < .milliseconds(1) {
            throw .invalidOption("timeToLive \(timeToLive) must be at least 1 ms (nil for no expiry)")
        }
        let now = options.clock.now
        let expiry = Self.expiry(now: now, timeToLive: timeToLive)
        return try ValueCodec.encode(value, entry: entry, policy: options.compression) { stored, codecFlags, originalLength throws(CaskError) in
            if let budget = options.itemByteBudget {
                let sealing = options.keyring == nil ? 0 : Format.Seal.overhead
                let size = RecordCodec.encodedSize(keyLength: key.utf8.count, storedLength: stored.count + sealing)
                guard size <= budget else { throw .exceedsByteLimit(key: key, size: size, budget: budget) }
            }
            let record = Record(stored: stored, originalLength: originalLength,
                                flags: codecFlags | (isPinned ? Format.RecordFlag.pinned : 0), expiry: expiry, now: now)
            return options.durability == .everyWrite ? try appendDurably(record, forKey: key) : try append(record, forKey: key)
        }
    }

    /// A value record's fields, encoded, before it is appended.
    private struct Record {
        let stored: UnsafeRawBufferPointer
        let originalLength: Int
        let flags: UInt8
        let expiry: Int64
        let now: Int64
    }

    /// Appends `record` and installs it at once, enforcing the limits (durability `.none` and
    /// `.interval`).
    private func append(_ record: Record, forKey key: String) throws(CaskError) -> IndexEntry {
        let (entry, deferred) = try withKeyBytes(key) { keyBytes throws(CaskError) in
            try state.withLock { s throws(CaskError) -> (IndexEntry, StoreState.Deferred) in
                guard !s.isClosed else { throw .closed }
                let entry = try s.appendRecord(
                    kind: .value, key: keyBytes, stored: record.stored, originalLength: record.originalLength,
                    flags: record.flags, expiry: record.expiry, now: record.now)
                s.install(entry, forKey: keyBytes)
                s.enforceLimits(now: record.now, written: keyBytes)
                return (entry, s.takeDeferred())
            }
        }
        armBackgroundWork(compaction: deferred.checkCompaction)
        if !deferred.isEmpty { finish(deferred) }
        return entry
    }

    /// Appends `record` and returns once the group commit has synced and installed it
    /// (``Durability/everyWrite``).
    private func appendDurably(_ record: Record, forKey key: String) throws(CaskError) -> IndexEntry {
        let (ticket, entry) = try withKeyBytes(key) { keyBytes throws(CaskError) in
            try state.withLock { s throws(CaskError) -> (UInt64, IndexEntry) in
                guard !s.isClosed else { throw .closed }
                let entry = try s.appendRecord(
                    kind: .value, key: keyBytes, stored: record.stored, originalLength: record.originalLength,
                    flags: record.flags, expiry: record.expiry, now: record.now)
                return (s.awaitSync(entry, key: keyBytes), entry)
            }
        }
        try commit(ticket)
        armBackgroundWork()
        return entry
    }
}
