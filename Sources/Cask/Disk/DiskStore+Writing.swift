import CaskFormat

/// The write path every value takes: encode (``ValueCodec``), append under the lock through the
/// funnel (``StoreState/write(_:now:durable:)``), and for ``Durability/everyWrite`` wait for
/// the group commit.
extension DiskStore {
    /// Appends the value's record and installs it; returns the index entry it wrote (its
    /// sequence number, where it lies, its expiry, as the index keeps them), or nil when the
    /// frequency-aware policy declined to store it (``EvictionPolicy/frequencyAware``). With `entry`, the
    /// value is a cache entry and the header goes in front of it
    /// (``putEntry(_:forKey:freshUntil:expiry:tags:)``).
    @discardableResult
    func put(_ value: UnsafeRawBufferPointer, forKey key: String, timeToLive: Duration?, isPinned: Bool,
             entry: EntryHeader? = nil) throws(CaskError) -> IndexEntry? {
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
            // The record's size on disk, its seal included: what the limit and admission weigh.
            let sealing = options.keyring == nil ? 0 : Format.Seal.overhead
            let size = RecordCodec.encodedSize(keyLength: key.utf8.count, storedLength: stored.count + sealing)
            if let budget = options.itemByteBudget, size > budget { throw .exceedsByteLimit(key: key, size: size, budget: budget) }
            let flags = codecFlags | (isPinned ? Format.RecordFlag.pinned : 0)
            return try writing(key) { keyBytes, s, durable throws(CaskError) in
                if s.declines(keyBytes, size: size, isPinned: isPinned, now: now) {
                    s.stats.admissionsDeclined += 1
                    return (nil, nil)
                }
                let written = try s.write(.value(keyBytes, stored: stored, originalLength: originalLength, flags: flags, expiry: expiry),
                                          now: now, durable: durable)
                if !durable { s.enforceLimits(now: now, written: keyBytes) }
                return (written.entry, written.ticket)
            }
        }
    }

    /// The funnel's lock half, which every write of one key takes: checks `key` (1 to 1,024
    /// bytes of UTF-8) and runs `body` with its bytes under the store's lock on an open store
    /// (`durable`: the store's mode wants each record synced before it is in effect), then does
    /// what its records left: waits for the group commit of the returned ticket, or hands the
    /// background work over.
    /// - Throws: ``CaskError/emptyKey``, ``CaskError/keyTooLong(length:maximum:)``,
    ///   ``CaskError/closed``, what `body` throws, or the group commit's failure (the record is
    ///   then not in effect).
    func writing<R>(_ key: String,
                    _ body: (_ key: UnsafeRawBufferPointer, inout StoreState, _ durable: Bool) throws(CaskError) -> (R, ticket: UInt64?)) throws(CaskError) -> R {
        let durable = options.durability == .everyWrite
        var key = key
        let locked: Result<(R, UInt64?, StoreState.Deferred), CaskError> = key.withUTF8 { utf8 in
            Result { () throws(CaskError) in
                let keyBytes = UnsafeRawBufferPointer(utf8)
                try checkKeyLength(keyBytes)
                return try state.withLock { s throws(CaskError) -> (R, UInt64?, StoreState.Deferred) in
                    guard !s.isClosed else { throw .closed }
                    let (result, ticket) = try body(keyBytes, &s, durable)
                    return (result, ticket, ticket == nil ? s.takeDeferred() : StoreState.Deferred())
                }
            }
        }
        let (result, ticket, deferred) = try locked.get()
        if let ticket {
            try commit(ticket)
            schedule(.lookForCompaction)
        } else if deferred.isEmpty {
            schedule(deferred.jobs)
        } else {
            finish(deferred)
        }
        return result
    }
}
