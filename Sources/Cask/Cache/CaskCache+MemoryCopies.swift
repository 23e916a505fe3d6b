import Foundation
import Synchronization

/// How the facade reads through its two layers: a memory hit when a copy answers, else the disk
/// layer, whose record is then kept in memory (``MemoryCopies`` holds the rules that keep the
/// copies true to the disk layer).
///
/// A hit is answered from memory alone only while the copy's expiry (never later than the
/// record's) has not come and the last use is within the disk layer's age limit; otherwise the
/// disk layer is asked. Calls that overlap in time are ordered as they take the locks: a hit
/// that runs while another thread's put evicts its key may still answer the value it had.
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
        copies.catchUp()
        // Under the memory shard's lock: the value itself when the copy answers alone (no
        // copy of the item), else the item for the disk layer to confirm.
        let hit = memory.value(forKey: key, now: now, reading: HitRead<T>(now: now, fresh: tracksUses, ageLimit: diskAgeLimit))
        switch hit {
        case .answered(let typed):
            copies.noteLookup()
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
        guard try copies.confirm(key, sequence: sequence, usedAt: now) else { return nil }
        hits.add(1, ordering: .relaxed)
        return typed
    }

    /// A disk record as the facade reads it: its value's bytes, its index entry, the end of its
    /// fresh period (0 for a plain value), a time no later than the disk layer's use of it, and
    /// the change journal's mark from before the read (``MemoryCopies/keep(_:forKey:cost:usedAt:since:)``).
    struct DiskRead {
        let data: Data
        let entry: TierRecord
        let freshUntil: Int64
        let usedAt: Int64
        let mark: UInt64
        /// Whether plain reads answer it (a plain value, or a cache entry in its fresh period).
        var isFresh: Bool { freshUntil == 0 || usedAt < freshUntil }
    }

    /// The disk layer's live record for `key` (a cache entry in its stale window included); nil
    /// (and nothing in memory) when the disk holds no live value.
    func diskRecord(forKey key: String) throws(CaskError) -> DiskRead? {
        misses.add(1, ordering: .relaxed)
        copies.flushUses()
        let mark = copies.mark
        let before = options.disk.clock.now
        guard let found = try copies.tier.read(forKey: key).map({
            DiskRead(data: $0.data, entry: $0.record, freshUntil: $0.record.freshUntil, usedAt: before, mark: mark)
        }) else {
            memory.removeValue(forKey: key)
            return nil
        }
        return found
    }

    /// Keeps a value read from disk in memory as the copy of its record (``MemoryCopies/keep(_:forKey:cost:usedAt:since:)``).
    func remember<T: Sendable>(_ value: T, _ read: DiskRead, forKey key: String) {
        let item = MemoryItem(value: value, sequence: read.entry.sequence, expiry: read.entry.expiry, freshUntil: read.freshUntil)
        copies.keep(item, forKey: key, cost: read.data.count, usedAt: read.usedAt, since: read.mark)
    }

    /// How a value is written to the tier: a plain value, or a cache entry fresh for
    /// `freshFor`, then stale for `staleWindow`, listing `tags`.
    enum TierWrite {
        case plain(timeToLive: Duration?, isPinned: Bool)
        case entry(freshFor: Duration, staleWindow: Duration, tags: [String])
    }

    /// Stores `value` in both layers: writes `data` to the tier as `kind` says, then keeps
    /// `value` in memory as the copy of the record written, with the record's own periods.
    /// Unless `propagates` is false (a copy of the shared tier's entry), the write is then
    /// sent to the shared tier, whether the local layers kept it or not.
    func writeThrough<T: Sendable>(_ value: T, data: Data, forKey key: String, as kind: TierWrite, propagates: Bool = true) throws(CaskError) {
        emit(.willAdd(key: key))
        copies.flushUses()   // the write may evict by LRU order
        let mark = copies.mark
        let now = options.disk.clock.now
        memory.removeValue(forKey: key)
        let tier = copies.tier
        let written: Result<TierRecord?, CaskError> = data.withUnsafeBytes { raw in
            Result { () throws(CaskError) in
                switch kind {
                case let .plain(timeToLive, isPinned): try tier.write(raw, forKey: key, timeToLive: timeToLive, isPinned: isPinned)
                case let .entry(freshFor, staleWindow, tags): try tier.write(raw, forKey: key, freshFor: freshFor, staleWindow: staleWindow, tags: tags)
                }
            }
        }
        let record = try written.get()
        if propagates { try sendToSharedTier(data, forKey: key, as: kind, record: record) }
        // Declined by the disk tier's admission policy: stored nowhere, as documented.
        guard let entry = record else { return }
        let item = MemoryItem(value: value, sequence: entry.sequence, expiry: entry.expiry, freshUntil: entry.freshUntil)
        copies.keep(item, forKey: key, cost: data.count, usedAt: now, since: mark)
        emit(.didAdd(key: key))
    }
}
