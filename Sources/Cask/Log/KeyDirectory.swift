import CaskFormat

/// What a change to the key directory released: the index entry a key had and its live pin
/// record. Their bytes are no longer live; the caller takes them off their segments' usage.
struct ReleasedRecords {
    var entry: IndexEntry?
    var pin: PinRecordLocation?
}

/// The key directory: each key's current record (the index), the live pin records, and what
/// they add up to (live bytes, items with a time to live), with the journal of changes a layer
/// above reads (``RecordChanges``). A value kept in ``StoreState``, changed only under the
/// store's lock and only through these methods; per-segment accounting is the caller's (the
/// released records say what to take off).
///
/// Invariants (``invariantViolation()``, which walks the index: tests and debug checks only):
/// `liveBytes` is the sum of the entries' record sizes and the live pin records' sizes;
/// `expiringCount` is the number of entries with an expiry; every live pin record's key has an
/// entry whose sequence number the pin record targets.
struct KeyDirectory: Sendable {
    private(set) var index = KeyIndex()
    /// The live pin record of each key that has one (keys' UTF-8 bytes). Pins are rare.
    private(set) var pinRecords: [[UInt8]: PinRecordLocation] = [:]
    /// Bytes of the live records: entries and live pin records.
    private(set) var liveBytes: Int64 = 0
    /// Live items with a time to live (expiry sweeps are skipped while there are none and no
    /// age limit).
    private(set) var expiringCount = 0
    /// The record changes a layer above reads, once it asked (``DiskStore/trackChanges()``);
    /// nil costs nothing.
    private(set) var changes: RecordChanges?

    // MARK: Changing keys

    /// Makes `entry` the key's current record, or removes the key for a tombstone. Returns what
    /// it replaced.
    mutating func install(_ entry: IndexEntry, forKey key: UnsafeRawBufferPointer) -> ReleasedRecords {
        guard !entry.isTombstone else { return remove(key) }
        liveBytes += Int64(entry.recordSize)
        if entry.expiry != 0 { expiringCount += 1 }
        guard let old = index.updateValue(entry, forKey: key) else { return ReleasedRecords() }
        return released(old, forKey: key)
    }

    /// Removes `key`: an expired, damaged, evicted or removed item. Returns what it held.
    mutating func remove(_ key: UnsafeRawBufferPointer) -> ReleasedRecords {
        guard let old = index.removeValue(forKey: key) else { return ReleasedRecords() }
        return released(old, forKey: key)
    }

    /// Removes entry number `n` (a removal record's walk of the index). Returns what it held.
    mutating func removeEntry(at n: Int) -> ReleasedRecords {
        let needsKey = !pinRecords.isEmpty || changes != nil
        let key = needsKey ? index.withKey(at: n) { k, _ in Array(k) } : nil
        let old = index.removeEntry(at: n)
        guard let key else {
            uncount(old)
            return ReleasedRecords(entry: old)
        }
        return key.withUnsafeBytes { released(old, forKey: $0) }
    }

    /// Takes `old` (just left the index) off the totals, with the key's pin record.
    private mutating func released(_ old: IndexEntry, forKey key: UnsafeRawBufferPointer) -> ReleasedRecords {
        uncount(old)
        changes?.recordGone(key, through: old.sequence)
        return ReleasedRecords(entry: old, pin: removePin(forKey: key))
    }

    private mutating func uncount(_ old: IndexEntry) {
        liveBytes -= Int64(old.recordSize)
        if old.expiry != 0 { expiringCount -= 1 }
    }

    /// Marks `key` as used at `time` when that is later than its last use (uses recorded
    /// after the fact). Returns whether the key has an entry.
    @discardableResult
    mutating func noteUse(ofKey key: UnsafeRawBufferPointer, at time: Int64) -> Bool {
        let found: Bool? = index.withEntry(forKey: key) { e in
            if time > e.accessTime { e.accessTime = time }
            return true
        }
        return found ?? false
    }

    /// Calls `body` with the key's entry to change its access time; nil when there is none.
    /// (Only the access time may change: sizes, locations and sequence stay.)
    mutating func touch<R>(_ key: UnsafeRawBufferPointer, _ body: (inout IndexEntry) -> R) -> R? {
        index.withEntry(forKey: key) { e in
            let before = e
            defer { assert(e.sequence == before.sequence && e.segment == before.segment && e.offset == before.offset, "touch changed a location") }
            return body(&e)
        }
    }

    // MARK: Pins

    /// Makes the pin record at `location` the key's live one and counts its bytes. Returns the
    /// live pin record it replaced.
    mutating func setLivePin(_ location: PinRecordLocation, forKey key: UnsafeRawBufferPointer) -> PinRecordLocation? {
        liveBytes += Int64(location.size)
        let old = pinRecords.updateValue(location, forKey: Array(key))
        if let old { liveBytes -= Int64(old.size) }
        return old
    }

    /// Sets or clears the pinned flag of the key's entry in place and makes `record` its live
    /// pin record. Returns the pin record it replaced.
    mutating func applyPin(_ pinned: Bool, record: PinRecordLocation, forKey key: UnsafeRawBufferPointer) -> PinRecordLocation? {
        index.withEntry(forKey: key) { e in
            if pinned { e.flags |= Format.RecordFlag.pinned } else { e.flags &= ~Format.RecordFlag.pinned }
        }
        return setLivePin(record, forKey: key)
    }

    /// The key's live pin record, removed and uncounted (its value record went).
    private mutating func removePin(forKey key: UnsafeRawBufferPointer) -> PinRecordLocation? {
        guard !pinRecords.isEmpty, let old = pinRecords.removeValue(forKey: Array(key)) else { return nil }
        liveBytes -= Int64(old.size)
        return old
    }

    /// Removes the live pin records that lie in `segments` (compaction did not copy them: they
    /// were not live). Returns them.
    mutating func removePins(in segments: Set<UInt32>) -> [PinRecordLocation] {
        let gone = pinRecords.filter { segments.contains($0.value.segment) }
        for (key, loc) in gone {
            pinRecords[key] = nil
            liveBytes -= Int64(loc.size)
        }
        return Array(gone.values)
    }

    // MARK: Compaction

    /// Moves the key's entry from (`segment`, `offset`) to its copy at (`to`, `newOffset`), if
    /// it still is the record with `sequence` there. Returns whether it moved.
    mutating func moveEntry(ofKey key: UnsafeRawBufferPointer, from segment: UInt32, offset: Int, sequence: UInt64, to: UInt32, newOffset: UInt32) -> Bool {
        index.withEntry(forKey: key) { e -> Bool in
            guard e.segment == segment && Int(e.offset) == offset && e.sequence == sequence else { return false }
            e.segment = to
            e.offset = newOffset
            return true
        } ?? false
    }

    /// Moves the key's live pin record likewise. Returns whether it moved.
    mutating func movePin(ofKey key: [UInt8], from segment: UInt32, offset: Int, sequence: UInt64, to: UInt32, newOffset: UInt32) -> Bool {
        guard var loc = pinRecords[key], loc.segment == segment, Int(loc.offset) == offset, loc.sequence == sequence else { return false }
        loc.segment = to
        loc.offset = newOffset
        pinRecords[key] = loc
        return true
    }

    // MARK: Whole directory

    /// Takes `index` (built by recovery) as the directory, counting its live bytes and expiring
    /// items; `each` sees every entry (for the segments' accounting).
    mutating func adopt(_ index: KeyIndex, each: (IndexEntry) -> Void) {
        assert(self.index.count == 0 && pinRecords.isEmpty, "adopting over a directory in use")
        self.index = index
        var total: Int64 = 0, expiring = 0
        for entry in index.entries {
            total += Int64(entry.recordSize)
            if entry.expiry != 0 { expiring += 1 }
            each(entry)
        }
        liveBytes += total
        expiringCount += expiring
    }

    /// The index's slot-table growth step (``KeyIndex/slotTablePreparationTick()``).
    mutating func slotTablePreparationTick() -> (wanted: Int?, released: [UInt64]?) { index.slotTablePreparationTick() }

    /// Hands the index a slot table made outside the lock (``KeyIndex/adoptPreparedSlotTable(_:)``).
    mutating func adoptPreparedSlotTable(_ table: [UInt64]) { index.adoptPreparedSlotTable(table) }

    /// Gives back the index's unused capacity (after an open). Returns the bytes it freed.
    mutating func trimExcessCapacity() -> Int {
        let before = index.memoryBytes
        index.trimExcessCapacity()
        return before - index.memoryBytes
    }

    /// Forgets every key (``DiskStore/removeAll()``, close).
    mutating func removeAll() {
        index = KeyIndex()
        changes?.recordAllGone()
        pinRecords = [:]
        liveBytes = 0
        expiringCount = 0
    }

    /// The journal of record changes, made on first use.
    mutating func changeJournal() -> RecordChanges {
        if let changes { return changes }
        let made = RecordChanges()
        changes = made
        return made
    }

    /// The first invariant above that does not hold, or nil; walks the whole index (tests and
    /// debug checks only).
    func invariantViolation() -> String? {
        var total: Int64 = pinRecords.values.reduce(0) { $0 + Int64($1.size) }, expiring = 0
        for entry in index.entries {
            total += Int64(entry.recordSize)
            if entry.expiry != 0 { expiring += 1 }
        }
        if total != liveBytes { return "live bytes \(liveBytes), the records add up to \(total)" }
        if expiring != expiringCount { return "expiring count \(expiringCount), the entries have \(expiring)" }
        for (key, pin) in pinRecords {
            let target = key.withUnsafeBytes { index.entry(forKey: $0)?.sequence }
            if target != pin.target { return "a live pin record targets \(pin.target), its key's entry is \(String(describing: target))" }
        }
        return nil
    }
}
