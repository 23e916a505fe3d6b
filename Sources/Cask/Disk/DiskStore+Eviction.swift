import CaskFormat

/// Eviction ahead of the byte limit, on the compaction thread (LimitsAndEviction.md, "Evicting
/// ahead of the limit").
///
/// A put evicts by itself only when live bytes reach the byte limit's live target (and then
/// exactly as ``StoreState/evictInOrder(cause:now:largestFirst:sparing:tombstoneIfNeeded:until:)``
/// says). With automatic compaction, the compaction thread keeps live bytes below that: once
/// they pass 96% of the target it evicts down to 94%, taking the lock only in short slices that
/// let writers in first, so no put waits for a walk of the index or a sort.
///
/// Order: the candidates are the keys ranked at or below a threshold taken from a sample of
/// 1,024 entries (about the least recently used 8%), evicted in rank order (gone items first,
/// then unpinned before pinned, then least recently used). A candidate read or written after
/// the walk ranks above the threshold again and is spared. So the order is the exact LRU
/// order among the candidates, and the sample decides which keys are candidates: an item
/// outside the least recently used ~8% is never evicted ahead.
extension DiskStore {
    /// Keys walked, and candidates evicted, per slice of the lock.
    static let entriesPerWalkSlice = 2048
    static let evictionsPerSlice = 128

    /// Evicts ahead of the byte limit when live bytes are past its low watermark.
    func evictAheadOfTheByteLimit() {
        let now = options.clock.now
        let start = state.withSlice { s -> (threshold: UInt64, count: Int, target: Int64)? in
            guard !s.isClosed, let t = s.liveByteTarget, s.liveBytes > t - t / 25 else { return nil }
            let threshold = s.index.count > 8192 ? s.evictionThreshold(share: 25, now: now) : .max
            return (threshold, s.index.count, t - t / 16)
        }
        guard let start else { return }
        var candidates = EvictionCandidates()
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
        evict(candidates, below: start.threshold, until: start.target, now: now)
    }

    /// Evicts `candidates` in order, a slice at a time, until live bytes are at most `target`.
    private func evict(_ candidates: EvictionCandidates, below threshold: UInt64, until target: Int64, now: Int64) {
        var next = 0
        while next < candidates.count {
            let range = next..<min(candidates.count, next + Self.evictionsPerSlice)
            let (finished, deferred) = state.withSlice { s -> (Bool, StoreState.Deferred) in
                guard !s.isClosed else { return (true, StoreState.Deferred()) }
                let age = s.ageLimitMilliseconds
                for n in range {
                    if s.liveBytes <= target { return (true, s.takeDeferred()) }
                    let stopped = candidates.withKey(n) { key -> Bool in
                        guard let e = s.index.entry(forKey: key),
                              StoreState.evictionRank(e, now: now, ageLimit: age) <= threshold else { return false }   // used since
                        do throws(CaskError) {
                            try s.evict(key, cause: StoreState.goneCause(e, now: now, ageLimit: age) ?? .size, now: now, tombstoneIfNeeded: true)
                            return false
                        } catch {
                            s.stats.backgroundFailures += 1
                            options.logger.warning("could not evict ahead of the byte limit: \(error)")
                            return true
                        }
                    }
                    if stopped { return (true, s.takeDeferred()) }
                }
                return (false, s.takeDeferred())
            }
            if !deferred.isEmpty { finish(deferred) }
            if finished { return }
            next = range.upperBound
        }
    }
}

/// Keys chosen for eviction with their ranks, the keys in one flat buffer (no allocation per key).
struct EvictionCandidates {
    private var entries: [(rank: UInt64, offset: Int, length: Int)] = []
    private var keys: [UInt8] = []

    var count: Int { entries.count }

    mutating func add(_ key: UnsafeRawBufferPointer, rank: UInt64) {
        entries.append((rank, keys.count, key.count))
        keys.appendBytes(key)
    }

    /// Orders the candidates by rank, lowest (evicted first) first.
    mutating func sort() { entries.sort { $0.rank < $1.rank } }

    func withKey<R>(_ n: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let e = entries[n]
        return keys.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[e.offset..<(e.offset + e.length)])) }
    }
}
