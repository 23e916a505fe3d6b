import CaskFormat

/// Eviction in order: walks of the index that find the candidates, and evicting them.
///
/// A walk takes the keys ranked at or below a threshold sampled from the index (about the
/// lowest-ranked 4% for a put, 16% for the compaction thread; every key in a store of at most
/// 8,192) and sorts them (``EvictionCandidates``). What the evictions of a write or trim leave
/// of the list is kept in ``LimitController/candidates`` for the next: while it lasts, a put
/// over a limit evicts in O(1) per item, with no walk. The order is exact: every key not in the
/// list ranked above the threshold at the walk, ranks only rise (a read or write moves an
/// item up; a candidate so moved is passed over), and a list is kept only while anything
/// written since the walk ranks above the candidates it still evicts (``EvictionCandidates/writeFloor``). What could lower a rank drops the list: a
/// change of a pin (``LimitController/generation``), the clock going back, or, while any item has a
/// TTL, the clock moving on at all (an item may have expired, and gone items rank first). The
/// compaction thread's walks, in slices of the lock (DiskStore+Eviction.swift), can miss a key
/// that a removal moved within the index during the walk: an eviction ahead of the limit is
/// exact among its candidates only.
extension StoreState {
    /// Evicts items in LRU order until `isDone` holds (`afterAWalk`, when given, once a walk of
    /// the index was needed: a batch that pays for the walk): items already expired or past the
    /// age limit first (with their own cause), then unpinned before pinned, then least recently
    /// read or written (to the millisecond), then oldest write. With `largestFirst`, the biggest
    /// records go first instead of the least recently used. `sparing` (the key a put just
    /// wrote) is never chosen. `tombstoneIfNeeded`: as in ``evict(_:cause:now:tombstoneIfNeeded:)``.
    mutating func evictInOrder(cause: EvictionCause, now: Int64, largestFirst: Bool = false, sparing: UnsafeRawBufferPointer? = nil,
                               tombstoneIfNeeded: Bool = false, until isDone: (StoreState) -> Bool,
                               afterAWalk batchDone: ((StoreState) -> Bool)? = nil) throws(CaskError) {
        var walked = false
        func done(_ s: StoreState) -> Bool {
            if walked, let batchDone { return batchDone(s) }
            return isDone(s)
        }
        while !done(self) && !index.isEmpty {
            var list: EvictionCandidates
            if !largestFirst, let kept = takeUsableCandidates(now: now) {
                list = kept
            } else {
                list = walk(now: now, share: 50, largestFirst: largestFirst, sparing: sparing)
                stats.evictionWalksOnTheWritePath += 1
                walked = true
                if list.count == 0 { return }
            }
            let before = index.count
            let finished = try evict(from: &list, cause: cause, now: now, sparing: sparing, tombstoneIfNeeded: tombstoneIfNeeded,
                                     isKept: !walked, until: done)
            if !largestFirst { limiter.keep(list) }
            // A walk whose every candidate stayed (each awaits a durable write's sync) would
            // find them again: stop rather than loop.
            if finished || (walked && index.count == before) { return }
        }
    }

    /// Evicts from `list`, in order from its `next`, until `isDone` holds (then returns true) or
    /// `limit` candidates were looked at or the list ends (then false). A candidate gone, read or
    /// written since the walk (another rank), or `sparing`, is passed over. `ahead`: counted as
    /// an eviction ahead of the limit. `isKept`: the list is from an earlier turn of the lock,
    /// and ends at its first candidate ranked at its ``EvictionCandidates/writeFloor`` or above.
    mutating func evict(from list: inout EvictionCandidates, cause: EvictionCause, now: Int64, sparing: UnsafeRawBufferPointer? = nil,
                        tombstoneIfNeeded: Bool, limit: Int = .max, ahead: Bool = false, isKept: Bool = true,
                        until isDone: (StoreState) -> Bool) throws(CaskError) -> Bool {
        let age = ageLimitMilliseconds
        var looked = 0
        while list.next < list.count && looked < limit {
            if isDone(self) { return true }
            if isKept && !list.nextIsBelowWrites {
                list.next = list.count
                break
            }
            let n = list.next
            list.next += 1
            looked += 1
            let walkedRank = list.rank(n), largestFirst = list.largestFirst
            try list.withKey(n) { key throws(CaskError) in
                if let sparing, sparing.elementsEqual(key) { return }
                guard let e = index.entry(forKey: key) else { return }
                let rank = Self.evictionRank(e, now: now, ageLimit: age, largestFirst: largestFirst)
                guard rank == walkedRank || rank == 0 else { return }   // used since (0: gone since)
                try evict(key, cause: Self.goneCause(e, now: now, ageLimit: age) ?? cause, now: now, tombstoneIfNeeded: tombstoneIfNeeded)
                if ahead { stats.evictionsAhead += 1 }
            }
        }
        return isDone(self)
    }

    /// Walks the whole index once under the lock and returns the keys ranked at or below a
    /// threshold for about 1/`share` of them (every key in a store of at most 8,192), sorted.
    func walk(now: Int64, share: Int, largestFirst: Bool = false, sparing: UnsafeRawBufferPointer? = nil) -> EvictionCandidates {
        let age = ageLimitMilliseconds
        let threshold = index.count > 8192 ? evictionThreshold(share: share, now: now, largestFirst: largestFirst) : UInt64.max
        var list = EvictionCandidates(threshold: threshold, takenAt: now, generation: limiter.generation, largestFirst: largestFirst)
        index.forEach { key, e in
            let rank = Self.evictionRank(e, now: now, ageLimit: age, largestFirst: largestFirst)
            if rank <= threshold && !(sparing.map { $0.elementsEqual(key) } ?? false) { list.add(key, rank: rank) }
        }
        list.sort()
        return list
    }

    /// Whether the kept candidates may still be evicted in order at `now` (see the type's
    /// comment): some are left, anything written since ranks above them, no pin changed since the
    /// walk, and the clock has not gone back, nor, while an item has a TTL, moved on.
    func hasUsableCandidates(now: Int64) -> Bool {
        guard let list = limiter.candidates else { return false }
        return list.remaining > 0 && list.generation == limiter.generation && list.takenAt <= now
            && (expiringCount == 0 || list.takenAt == now) && list.nextIsBelowWrites
    }

    /// The kept candidates when ``hasUsableCandidates(now:)``; they are no longer kept either way.
    mutating func takeUsableCandidates(now: Int64) -> EvictionCandidates? {
        let usable = hasUsableCandidates(now: now)
        let list = limiter.take()
        return usable ? list : nil
    }

    /// One 64-bit rank per key, lowest evicted first: gone items rank 0; then pinned last; then
    /// access time in milliseconds since 2020 (41 bits, until 2089; or size, descending); then
    /// the low 22 bits of the sequence (older writes first within a millisecond), so that a
    /// sample gives a tight threshold.
    @inline(__always)
    static func evictionRank(_ e: IndexEntry, now: Int64, ageLimit: Int64, largestFirst: Bool = false) -> UInt64 {
        if goneCause(e, now: now, ageLimit: ageLimit) != nil { return 0 }
        let pinned: UInt64 = e.isPinned ? 1 << 63 : 0
        let order = largestFirst
            ? UInt64(UInt32.max - UInt32(clamping: e.recordSize))
            : UInt64(min(max(0, e.accessTime - IndexEntry.epochMilliseconds), (1 << 41) - 1))
        return pinned | order << 22 | (e.sequence & 0x3F_FFFF)
    }

    /// A rank below which about 1/`share` of the keys lie (twice that, to be safe), from a
    /// sample of ``thresholdSampleSize`` random entries: O(1).
    func evictionThreshold(share: Int, now: Int64, largestFirst: Bool = false) -> UInt64 {
        guard !index.isEmpty else { return .max }
        var rng = FastRandom()
        var sample: [UInt64] = []
        sample.reserveCapacity(Self.thresholdSampleSize)
        for _ in 0..<Self.thresholdSampleSize {
            sample.append(randomRank(&rng, now: now, largestFirst: largestFirst))
        }
        return Self.threshold(fromSample: sample, keys: index.count, share: share)
    }

    /// Entries sampled for an eviction threshold.
    static let thresholdSampleSize = 1024

    /// The eviction rank of a random entry of the (non-empty) index.
    func randomRank(_ rng: inout FastRandom, now: Int64, largestFirst: Bool = false) -> UInt64 {
        let e = index.entries[Int.random(in: 0..<index.count, using: &rng)]
        return Self.evictionRank(e, now: now, ageLimit: ageLimitMilliseconds, largestFirst: largestFirst)
    }

    /// The rank below which about twice 1/`share` of `keys` keys lie, judged from `sample`.
    static func threshold(fromSample sample: [UInt64], keys n: Int, share: Int) -> UInt64 {
        guard !sample.isEmpty, n > 0 else { return .max }
        let sorted = sample.sorted()
        let wanted = max(64, n / share)
        return sorted[min(sorted.count - 1, wanted * sorted.count / n * 2 + 1)]
    }
}
