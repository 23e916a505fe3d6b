import CaskFormat

/// Eviction ahead of the byte limit, on the compaction thread (LimitsAndEviction.md, "Evicting
/// ahead of the limit").
///
/// A put evicts by itself only when live bytes pass the byte limit's live target, and then
/// from the candidates a walk of the index left (``LimitController/candidates``), in O(1)
/// per item, walking the index itself only when there are none (StoreState+Eviction.swift).
/// The compaction thread keeps both from happening: once live bytes pass 96% of the target
/// with half of the candidates used (or none), it walks the index for new ones, and once they pass 99% it evicts
/// down to 98%, taking the lock only in short slices that let writers in first, also between
/// the passes of a compaction. So no put waits for a walk of the index or a sort.
///
/// Order: the candidates are the keys ranked at or below a threshold taken from a sample of
/// 1,024 entries (about the least recently used 16%), evicted in rank order (gone items first,
/// then unpinned before pinned, then least recently used). A candidate read or written after
/// the walk has another rank then, and is passed over. So the order is the exact LRU order
/// among the candidates; a key a removal moved within the index while the walk was between
/// slices can be missed by it.
extension DiskStore {
    /// Keys walked per step of a walk (slices are bounded by time:
    /// ``StoreStateLock/forEachInSlices(_:between:_:)``), and candidates looked at per slice of
    /// the lock (an eviction writes a tombstone: about a microsecond).
    static let entriesPerWalkStep = 64
    static let evictionsPerSlice = 16

    /// What the compaction thread found to do for the byte limit.
    private struct AheadWork {
        /// Live bytes to evict down to, or nil when only new candidates are needed.
        var target: Int64?
        var needsWalk: Bool
    }

    /// Finds candidates and evicts ahead of the byte limit as its watermarks say (the type's
    /// comment). Called only by the compaction thread.
    func evictAheadOfTheByteLimit() {
        let now = options.clock.now
        for _ in 0..<4 {   // a walk's candidates last for several rounds; more when reads spare them
            let work = state.withSlice { s -> AheadWork? in
                guard !s.isClosed, let t = s.liveByteTarget else { return nil }
                let evict = s.liveBytes > t - t / 100
                let needsWalk = !s.hasUsableCandidates(now: now) || s.limiter.candidates?.isRunningLow == true
                guard evict || (needsWalk && s.liveBytes > t - t / 25) else { return nil }
                return AheadWork(target: evict ? t - t / 50 : nil, needsWalk: needsWalk)
            }
            guard let work else { return }
            if work.needsWalk && !findCandidatesInSlices(now: now) { return }
            guard let target = work.target, !evictCandidatesInSlices(until: target, now: now) else { return }
        }
    }

    /// Walks the index in slices of the lock and keeps the candidates it finds (unless a pin
    /// changed meanwhile). Returns false when the store closed or nothing was found.
    private func findCandidatesInSlices(now: Int64) -> Bool {
        guard let start = startWalk(now: now) else { return false }
        var list = start
        var closed = false
        state.forEachInSlices(0..<Int.max) { s, chunk in
            let first = chunk * Self.entriesPerWalkStep
            guard !s.isClosed, first < s.index.count else { closed = s.isClosed; return false }
            let age = s.ageLimitMilliseconds
            s.index.forEach(in: first..<(first + Self.entriesPerWalkStep)) { key, e in
                let rank = StoreState.evictionRank(e, now: now, ageLimit: age)
                if rank <= start.threshold { list.add(key, rank: rank) }
            }
            return true
        }
        if closed { return false }
        list.sort()
        guard list.count > 0 else { return false }
        return state.withSlice { s -> Bool in
            guard !s.isClosed else { return false }
            return s.limiter.keep(list)
        }
    }

    /// An empty candidate list with the threshold of a sample of the index (in slices of the
    /// lock; the whole index is a candidate in a store of at most 8,192 keys); nil when the
    /// store is closed or empty.
    private func startWalk(now: Int64) -> EvictionCandidates? {
        var rng = FastRandom()
        var sample: [UInt64] = []
        sample.reserveCapacity(StoreState.thresholdSampleSize)
        var keys = 0, generation: UInt64 = 0
        let taken = state.forEachInSlices(0..<StoreState.thresholdSampleSize) { s, _ in
            guard !s.isClosed, !s.index.isEmpty else { return false }
            keys = s.index.count
            generation = s.limiter.generation
            if keys > 8192 { sample.append(s.randomRank(&rng, now: now)) }
            return true
        }
        guard taken == StoreState.thresholdSampleSize else { return nil }
        let threshold = keys > 8192 ? StoreState.threshold(fromSample: sample, keys: keys, share: 12) : .max
        return EvictionCandidates(threshold: threshold, takenAt: now, generation: generation)
    }

    /// Evicts the kept candidates, a slice of the lock at a time, until live bytes are at most
    /// `target` (then returns true) or none are left. A failure is counted and logged.
    private func evictCandidatesInSlices(until target: Int64, now: Int64) -> Bool {
        while true {
            let (done, more, deferred) = state.withSlice { s -> (Bool, Bool, StoreState.Deferred) in
                guard !s.isClosed, var list = s.takeUsableCandidates(now: now) else { return (false, false, StoreState.Deferred()) }
                do throws(CaskError) {
                    let done = try s.evict(from: &list, cause: .size, now: now, tombstoneIfNeeded: true,
                                           limit: Self.evictionsPerSlice, ahead: true) { $0.liveBytes <= target }
                    s.limiter.keep(list)
                    return (done, !done && list.remaining > 0, s.takeBackgroundDeferred())
                } catch {
                    s.stats.backgroundFailures += 1
                    options.logger.warning("could not evict ahead of the byte limit: \(error)")
                    return (false, false, s.takeBackgroundDeferred())
                }
            }
            if !deferred.isEmpty { finish(deferred) }
            if done || !more { return done }
        }
    }
}
