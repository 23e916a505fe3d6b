import CaskFormat

/// A record to write, and what it does once it is in effect: the one currency of the write
/// path (``StoreState/write(_:now:durable:)``). Values, tombstones (removals, evictions, damage,
/// recovery), pin records and removal records all take this form. Its buffers are borrowed for
/// the call.
struct RecordWrite {
    /// What the record does once it is in effect.
    enum Effect: Sendable, Equatable {
        /// A value or tombstone: it becomes the key's entry (a tombstone removes the key).
        case install
        /// A removal record: nothing changes in the index (its walk is the caller's).
        case settle
        /// A pin record: sets or clears the pin of the key's entry while that entry is the one
        /// with sequence number `target`.
        case pin(Bool, target: UInt64)
    }

    let kind: Format.RecordKind
    let key: UnsafeRawBufferPointer
    var stored = UnsafeRawBufferPointer(start: nil, count: 0)
    var originalLength = 0
    var flags: UInt8 = 0
    /// A value's expiry (ms since 1970, 0: none); a tombstone's hidden sequence number; a pin
    /// record's target (format-spec.md, "Record").
    var expiry: Int64 = 0
    /// For a tombstone of a live item: its key, for the `.removed` event.
    var removedKey: String?

    var effect: Effect {
        switch kind {
        case .removal: return .settle
        case .pin: return .pin(flags & Format.RecordFlag.pinned != 0, target: UInt64(bitPattern: expiry))
        default: return .install
        }
    }

    /// A value record: `stored` (compressed or not, `originalLength` bytes as given).
    static func value(_ key: UnsafeRawBufferPointer, stored: UnsafeRawBufferPointer, originalLength: Int, flags: UInt8, expiry: Int64) -> RecordWrite {
        RecordWrite(kind: .value, key: key, stored: stored, originalLength: originalLength, flags: flags, expiry: expiry)
    }

    /// A tombstone hiding records up to sequence `hiding` (``StoreState/hiding(_:)``).
    static func tombstone(_ key: UnsafeRawBufferPointer, hiding: Int64, removedKey: String? = nil) -> RecordWrite {
        RecordWrite(kind: .tombstone, key: key, expiry: hiding, removedKey: removedKey)
    }

    /// A pin record setting or clearing the pin of the entry with sequence `target`.
    static func pin(_ key: UnsafeRawBufferPointer, pinned: Bool, target: UInt64) -> RecordWrite {
        RecordWrite(kind: .pin, key: key, flags: pinned ? Format.RecordFlag.pinned : 0, expiry: Int64(bitPattern: target))
    }

    /// A removal record: of `key` as a prefix, or with `tag`, of `key` as a tag.
    static func removal(_ key: UnsafeRawBufferPointer, tag: Bool = false) -> RecordWrite {
        RecordWrite(kind: .removal, key: key, flags: tag ? Format.RecordFlag.tagged : 0)
    }
}

/// The funnel every record goes through (format-spec.md, "Writing protocol"): appended, then in
/// effect at once, or (durable) queued for the group commit, which puts it in effect once synced.
extension StoreState {
    /// Appends `record` to the active segment. A durable record waits in ``commits`` until the
    /// group commit has synced it (``installDurable(now:)`` puts it in effect); any other is in
    /// effect when this returns. Limits are the caller's, once per batch
    /// (``enforceLimits(now:written:)``). Returns the record's entry and, when durable, its ticket.
    /// - Throws: what appending throws; nothing changed then.
    mutating func write(_ record: RecordWrite, now: Int64, durable: Bool) throws(CaskError) -> (entry: IndexEntry, ticket: UInt64?) {
        try rolloverIfFull()
        let (entry, size) = try tail.append(record, now: now)
        noteAppended(size)
        if durable {
            return (entry, commits.enqueue(entry, key: record.key, removedKey: record.removedKey, effect: record.effect))
        }
        putInEffect(entry, key: record.key, effect: record.effect, removedKey: record.removedKey)
        return (entry, nil)
    }

    /// Puts an appended record in effect: installed, settled or its pin applied; the `.removed`
    /// event of a live item's removal queued.
    mutating func putInEffect(_ entry: IndexEntry, key: UnsafeRawBufferPointer, effect: RecordWrite.Effect, removedKey: String?) {
        switch effect {
        case .install:
            install(entry, forKey: key)
        case .settle:
            break
        case let .pin(pinned, target):
            // A pin record whose entry was replaced meanwhile is dead (the new entry has no pin).
            guard index.entry(forKey: key)?.sequence == target else { break }
            applyPin(pinned, record: PinRecordLocation(segment: entry.segment, offset: entry.offset, size: entry.recordSize,
                                                       sequence: entry.sequence, target: target), forKey: key)
        }
        if let removedKey, options.eventHandler != nil { work.queue(.removed(key: removedKey)) }
    }

    /// Seals the active segment first when it is full or may not take more records (a failed
    /// sync): behind the gate when the next segment is prepared (the flush thread syncs the
    /// sealed one outside the lock), else with the sync here.
    private mutating func rolloverIfFull() throws(CaskError) {
        guard writer.needsRollover || (writer.size >= inlineRolloverSize && !writer.isEmpty) else { return }
        if try rolloverBehindGate() == nil { try rollover() }
    }

    /// Counts a record of `size` bytes appended to the active segment, and asks the flush
    /// thread to seal the segment once it is nearly full.
    private mutating func noteAppended(_ size: Int64) {
        segmentSet.grow(writer.id, by: size)
        stats.writes += 1
        stats.bytesWritten += Int(size)
        if !work.rolloverRequested && writer.size >= backgroundRolloverSize { work.requestRollover() }
    }
}
