import CaskFormat

/// Eviction ahead of the byte limit, on the compaction thread (LimitsAndEviction.md, "Evicting
/// ahead of the limit").
///
/// A put evicts by itself only when live bytes reach the byte limit's live target (and then
/// exactly as ``StoreState/evictInOrder(cause:now:largestFirst:sparing:tombstoneIfNeeded:until:)``
/// says, down to 98% of it). With automatic compaction, the compaction thread keeps live bytes
/// below that: once they pass 99% of the target it evicts down to 98%, taking the lock only in
/// short slices that let writers in first, so no put waits for a walk of the index or a sort.
/// One walk finds candidates for several such rounds (about 8% of the keys); the next rounds
/// take the candidates it left.
///
/// Order: the candidates are the keys ranked at or below a threshold taken from a sample of
/// 1,024 entries (about the least recently used 8%), evicted in rank order (gone items first,
/// then unpinned before pinned, then least recently used). A candidate read or written after
/// the walk has another rank then, and is spared. So the order is the exact LRU
/// order among the candidates, and the sample decides which keys are candidates: an item
/// outside the least recently used ~8% is never evicted ahead.
extension DiskStore {
    /// Keys walked, and candidates evicted, per slice of the lock.
    static let entriesPerWalkSlice = 2048
    static let evictionsPerSlice = 128

    /// Evicts ahead of the byte limit when live bytes are past its low watermark. Called only
    /// by the compaction thread.
    func evictAheadOfTheByteLimit() {
        let now = options.clock.now
        let start = state.withSlice { s -> (threshold: UInt64, count: Int, target: Int64)? in
            guard !s.isClosed, let t = s.liveByteTarget, s.liveBytes > t - t / 100 else { return nil }
            let threshold = s.index.count > 8192 ? s.evictionThreshold(share: 25, now: now) : .max
            return (threshold, s.index.count, t - t / 50)
        }
        guard let start else { return }
        if var left = evictionCandidates.withLock({ c in defer { c = nil }; return c }), left.next < left.count {
            evict(&left, until: start.target, now: now)
            if left.next < left.count { evictionCandidates.withLock { $0 = left } }
            if state.withLock({ $0.liveBytes <= start.target }) { return }
        }
        var candidates = EvictionCandidates(threshold: start.threshold)
        for first in stride(from: 0, to: start.count, by: Self.entriesPerWalkSlice) {
            let open = state.withSlice { s -> Bool in
                let age = s.ageLimitMilliseconds
                s.index.forEach(in: first..<(first + Self.entriesPerWalkSlice)) { key, e in
                    let rank = StoreState.evictionRank(e, now: now, ageLimit: age)
                    if rank <= start.threshold { candidates.add(key, rank: rank) }
                }
                return !s.isClosed
            }
            if !open { return }
        }
        candidates.sort()
        evict(&candidates, until: start.target, now: now)
        if candidates.next < candidates.count { evictionCandidates.withLock { $0 = candidates } }
    }

    /// Evicts `candidates` in order from `next`, a slice at a time, until live bytes are at most
    /// `target`; `next` ends at the first candidate not looked at.
    private func evict(_ candidates: inout EvictionCandidates, until target: Int64, now: Int64) {
        let list = candidates
        while candidates.next < list.count {
            let range = candidates.next..<min(list.count, candidates.next + Self.evictionsPerSlice)
            let (stoppedAt, deferred) = state.withSlice { s -> (Int?, StoreState.Deferred) in
                guard !s.isClosed else { return (range.lowerBound, StoreState.Deferred()) }
                for n in range {
                    if s.liveBytes <= target { return (n, s.takeDeferred()) }
                    if !evictCandidate(list, n, now: now, in: &s) { return (n + 1, s.takeDeferred()) }
                }
                return (nil, s.takeDeferred())
            }
            if !deferred.isEmpty { finish(deferred) }
            candidates.next = stoppedAt ?? range.upperBound
            if stoppedAt != nil { return }
        }
    }

    /// Evicts candidate `n` unless it was read or written since the walk (its rank changed) or is
    /// gone. Returns false when the eviction failed (counted and logged).
    private func evictCandidate(_ list: EvictionCandidates, _ n: Int, now: Int64, in s: inout StoreState) -> Bool {
        let age = s.ageLimitMilliseconds
        return list.withKey(n) { key -> Bool in
            guard let e = s.index.entry(forKey: key) else { return true }
            let rank = StoreState.evictionRank(e, now: now, ageLimit: age)
            guard rank == list.rank(n) || rank == 0 else { return true }   // used since (0: expired since)
            do throws(CaskError) {
                try s.evict(key, cause: StoreState.goneCause(e, now: now, ageLimit: age) ?? .size, now: now, tombstoneIfNeeded: true)
                s.stats.evictionsAhead += 1
                return true
            } catch {
                s.stats.backgroundFailures += 1
                options.logger.warning("could not evict ahead of the byte limit: \(error)")
                return false
            }
        }
    }
}

/// Keys chosen for eviction with their ranks, the keys in one flat buffer (no allocation per key).
struct EvictionCandidates: Sendable {
    private var entries: [(rank: UInt64, offset: Int, length: Int)] = []
    private var keys: [UInt8] = []
    /// The rank the candidates were chosen at or below.
    let threshold: UInt64
    /// The first candidate not yet looked at.
    var next = 0

    init(threshold: UInt64) { self.threshold = threshold }

    var count: Int { entries.count }

    mutating func add(_ key: UnsafeRawBufferPointer, rank: UInt64) {
        entries.append((rank, keys.count, key.count))
        keys.appendBytes(key)
    }

    /// Orders the candidates by rank, lowest (evicted first) first.
    mutating func sort() { entries.sort { $0.rank < $1.rank } }

    /// The rank candidate `n` had at the walk.
    func rank(_ n: Int) -> UInt64 { entries[n].rank }

    func withKey<R>(_ n: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let e = entries[n]
        return keys.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[e.offset..<(e.offset + e.length)])) }
    }
}
