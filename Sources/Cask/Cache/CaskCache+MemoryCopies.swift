import Foundation
import Synchronization

/// How the memory layer's copies stay true to the disk layer (the disk layer decides what
/// exists), and how memory hits count as uses there.
///
/// A copy is made under the disk layer's lock, only while its record is the live one; every
/// change of a key's live record (through this cache or through ``CaskCache/disk``: a put, a
/// removal, an eviction, an expiry, damage, `removeAll`, `close`) drops the copy under that same
/// lock (``RecordObserver``). So a copy in memory is of a live record, except for time: a hit
/// is answered from memory alone only while the copy's expiry (never later than the record's)
/// has not come and the last use is within the disk layer's age limit; otherwise the disk layer
/// is asked. Such a hit is recorded in its memory shard and counted by the disk layer before it
/// next decides or reports anything by access time (LRU eviction, the age limit, trims,
/// metadata, the index snapshot), so disk-side limits see memory hits exactly. Calls that
/// overlap in time are ordered as they take the locks: a hit that runs while another thread's
/// put evicts its key may still answer the value it had.
extension CaskCache {
    /// What a memory lookup found: a value the copy answers alone (the use is recorded for the
    /// disk layer), one the disk layer must confirm, or a value of another type.
    @usableFromInline
    enum MemoryHit<T> {
        case answered(T)
        case needsDisk(T, UInt64)
        case mismatch
    }

    /// Under the memory shard's lock: the typed value of a copy that answers alone (its expiry
    /// not come, its last use within the disk layer's age limit, its uses tracked), else the
    /// value and its record's sequence for the disk layer to confirm.
    @usableFromInline
    struct HitRead<T: Sendable>: MemoryRead {
        @usableFromInline let now: Int64
        @usableFromInline let fresh: Bool
        @usableFromInline let ageLimit: Int64

        @inlinable init(now: Int64, fresh: Bool, ageLimit: Int64) {
            self.now = now
            self.fresh = fresh
            self.ageLimit = ageLimit
        }

        @inlinable @inline(__always)
        func read(_ item: borrowing MemoryItem, previousUse: Int64) -> (result: MemoryHit<T>, recordUse: Bool) {
            guard let typed = item.value(as: T.self) else { return (.mismatch, false) }
            // A cache entry past its fresh period: plain reads answer nil (the disk says the same).
            if item.freshUntil != 0 && now >= item.freshUntil { return (.mismatch, false) }
            if item.answersAlone(now: now, previousUse: previousUse, tracksUses: fresh, ageLimit: ageLimit) {
                return (.answered(typed), true)
            }
            return (.needsDisk(typed, item.sequence), false)
        }
    }

    /// The memory layer's value for `key` when it is a `T` and a copy of the live disk record,
    /// counted as a use there. A stale copy is dropped.
    @inlinable
    func memoryHit<T: Sendable>(forKey key: String) throws(CaskError) -> T? {
        // One clock reading for both layers: the memory and disk layers share the disk's clock.
        let now = options.disk.clock.now
        // Under the memory shard's lock: the value itself when the copy answers alone (no
        // copy of the item), else the item for the disk layer to confirm.
        let hit = memory.value(forKey: key, now: now, reading: HitRead<T>(now: now, fresh: tracksUses, ageLimit: diskAgeLimit))
        switch hit {
        case .answered(let typed):
            return typed   // counted by the memory shard, as a recorded use

        case .needsDisk(let typed, let sequence):
            return try checkedHit(typed, sequence: sequence, forKey: key, now: now)
        case .mismatch, nil:
            return nil
        }
    }

    /// A memory hit that the disk layer confirms (and counts): for copies whose expiry or age
    /// needs its word, and for a read-only disk layer.
    @inlinable
    func checkedHit<T: Sendable>(_ typed: T, sequence: UInt64, forKey key: String, now: Int64) throws(CaskError) -> T? {
        guard try disk.touch(key, now: now) == sequence else {
            memory.removeValue(forKey: key)
            return nil
        }
        hits.add(1, ordering: .relaxed)
        return typed
    }

    /// A disk record as the facade reads it: its value's bytes, its index entry, the end of its
    /// fresh period (0 for a plain value), and a time no later than the disk layer's use of it.
    struct DiskRead {
        let data: Data
        let entry: IndexEntry
        let freshUntil: Int64
        let usedAt: Int64
        /// Whether plain reads answer it (a plain value, or a cache entry in its fresh period).
        var isFresh: Bool { freshUntil == 0 || usedAt < freshUntil }
    }

    /// The disk layer's live record for `key` (a cache entry in its stale window included); nil
    /// (and nothing in memory) when the disk holds no live value.
    func diskRecord(forKey key: String) throws(CaskError) -> DiskRead? {
        misses.add(1, ordering: .relaxed)
        let before = options.disk.clock.now
        guard let found = try disk.withRecord(forKey: key, { bytes, entry, freshUntil in
            DiskRead(data: Data(bytes), entry: entry, freshUntil: freshUntil, usedAt: before)
        }) else {
            memory.removeValue(forKey: key)
            return nil
        }
        return found
    }

    /// ``remember(_:sequence:expiry:forKey:cost:usedAt:freshUntil:)`` for a value read from disk.
    func remember<T: Sendable>(_ value: T, _ read: DiskRead, forKey key: String) {
        remember(value, sequence: read.entry.sequence, expiry: read.entry.expiry, forKey: key, cost: read.data.count,
                 usedAt: read.usedAt, freshUntil: read.freshUntil)
    }

    /// Keeps `value` in memory as the copy of disk record `sequence`, when that record is still
    /// the live one; evictions it calls for run after the disk layer's lock is released.
    /// `usedAt`: a time no later than the disk layer's last use of the record (read before the
    /// disk call), so that the copy's age is never less than the record's.
    func remember<T: Sendable>(_ value: T, sequence: UInt64, expiry: Int64, forKey key: String, cost: Int, usedAt: Int64, freshUntil: Int64 = 0) {
        let item = MemoryItem(value: value, sequence: sequence, expiry: expiry, freshUntil: freshUntil)
        guard tracksUses else {
            memory.setValue(item, forKey: key, cost: cost)
            return
        }
        _ = disk.whileLive(key, sequence: sequence) { memory.insert(item, forKey: key, cost: cost, now: usedAt) }
        memory.enforceLimitsIfNeeded()
    }

    func store<T: Sendable>(_ value: T, data: Data, forKey key: String, timeToLive: Duration?, isPinned: Bool) throws(CaskError) {
        try writeThrough(value, data: data, forKey: key, freshUntil: 0) { raw throws(CaskError) in
            try disk.put(raw, forKey: key, timeToLive: timeToLive, isPinned: isPinned)
        }
    }

    /// Stores `value` as a cache entry fresh until `freshUntil` and kept until `expiry` (ms
    /// since 1970), listing `tags`, in both layers.
    func storeEntry<T: Sendable>(_ value: T, data: Data, forKey key: String, freshUntil: Int64, expiry: Int64, tags: [String] = []) throws(CaskError) {
        try writeThrough(value, data: data, forKey: key, freshUntil: freshUntil) { raw throws(CaskError) in
            try disk.writeEntry(raw, forKey: key, freshUntil: freshUntil, expiry: expiry, tags: tags)
        }
    }

    /// Writes `data` to disk with `put`, which returns the index entry it wrote, then keeps
    /// `value` in memory as the copy of that record, with the record's own expiry.
    private func writeThrough<T: Sendable>(_ value: T, data: Data, forKey key: String, freshUntil: Int64,
                                           put: (UnsafeRawBufferPointer) throws(CaskError) -> IndexEntry) throws(CaskError) {
        emit(.willAdd(key: key))
        let now = options.disk.clock.now
        memory.removeValue(forKey: key)
        let written: Result<IndexEntry, CaskError> = data.withUnsafeBytes { raw in Result { () throws(CaskError) in try put(raw) } }
        let entry = try written.get()
        remember(value, sequence: entry.sequence, expiry: entry.expiry, forKey: key, cost: data.count, usedAt: now, freshUntil: freshUntil)
        emit(.didAdd(key: key))
    }

    /// The disk layer's view of the memory layer (``RecordObserver``).
    static func observer(of memory: MemoryCache<MemoryItem>) -> RecordObserver {
        RecordObserver(
            recordGone: { key in
                if let key { memory.removeValue(forKey: String(decoding: key, as: UTF8.self)) } else { memory.removeAll() }
            },
            mayHaveUses: { memory.mayHaveUses },
            takeUses: { memory.takeUses() })
    }
}
