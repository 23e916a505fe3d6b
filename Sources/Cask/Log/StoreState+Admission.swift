/// The frequency-aware policy's admission (``EvictionPolicy/frequencyAware``): whether a put of
/// a new key may displace the item eviction would take next.
extension StoreState {
    /// Candidates looked at for the next victim before giving up (each read or written since
    /// the walk is passed over, as eviction passes it).
    static let victimSearchLimit = 16

    /// True when the policy declines to store a put of `key` (a record of `size` bytes) at
    /// `now`: the store counts requests, has a byte limit the record would push the live data
    /// near (within 4% of its target), does not hold the key, the put is not pinned, and the
    /// key was asked for less often lately than the least recently used item it would evict.
    /// When the put must evict and no kept candidates say which item goes next, the walk of
    /// the index that eviction would take next is taken now (and its candidates kept for that
    /// eviction); within the 4% band without candidates (the compaction thread keeps them
    /// ready) the put is admitted. O(1) but for that walk.
    mutating func declines(_ key: UnsafeRawBufferPointer, size: Int, isPinned: Bool, now: Int64) -> Bool {
        guard limiter.countsRequests, !isPinned, let target = liveByteTarget, liveBytes + Int64(size) > target - target / 25,
              index.entry(forKey: key) == nil else { return false }
        if liveBytes + Int64(size) > target && !hasUsableCandidates(now: now) {
            limiter.keep(walk(now: now, share: 50))
            stats.evictionWalksOnTheWritePath += 1
        }
        guard let victim = nextVictimHash(now: now) else { return false }
        return !limiter.admits(index.hash(key), over: victim)
    }

    /// The key hash of the next item eviction would take from the kept candidates; nil when
    /// there are none usable or the next is already gone (expired or aged out: evicting it
    /// displaces nothing anyone asks for).
    private func nextVictimHash(now: Int64) -> UInt64? {
        guard hasUsableCandidates(now: now), let list = limiter.candidates else { return nil }
        let age = ageLimitMilliseconds
        for n in list.next..<min(list.count, list.next + Self.victimSearchLimit) {
            let walkedRank = list.rank(n)
            let found = list.withKey(n) { key -> (hash: UInt64, gone: Bool)? in
                guard let e = index.entry(forKey: key) else { return nil }
                let rank = Self.evictionRank(e, now: now, ageLimit: age)
                guard rank == walkedRank || rank == 0 else { return nil }   // used since the walk
                return (index.hash(key), rank == 0)
            }
            if let found { return found.gone ? nil : found.hash }
        }
        return nil
    }
}

