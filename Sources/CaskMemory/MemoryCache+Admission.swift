import CaskSupport
import Synchronization

/// The frequency-aware policy's admission (``EvictionPolicy/frequencyAware``): reads count
/// their keys, and a write of a new key into a full cache must beat the item it would evict.
extension MemoryCache {
    /// Writes of new keys the policy declined since the cache was made (always 0 under
    /// ``EvictionPolicy/leastRecentlyUsed``). Thread-safe.
    public var admissionsDeclined: Int { declined.load(ordering: .relaxed) }

    /// Counts a request (a read, hit or miss: `missed`) for the key of hash `h`. The sketch
    /// grows with the items held. One lock, O(1) amortized.
    @usableFromInline
    func noteRequest(_ h: UInt64, missed: Bool) {
        let items = itemCount.load(ordering: .relaxed)
        frequencies?.withLock { $0.noteRequest(h, keys: items, missed: missed) }
    }

    /// Notes the hashes of items a limit evicted (the policy's ghost list of evicted keys).
    @usableFromInline
    func noteEvictions(_ hashes: [UInt64]) {
        frequencies?.withLock { admission in for h in hashes { admission.noteEviction(h) } }
    }

    /// True when the policy declines a write of `key` (hash `h`, `cost`): the cache does not
    /// hold the key, storing it would pass a limit, and the key was asked for no more often
    /// lately than the cache's least recently used item, give or take the adaptive handicap
    /// (one that was never asked for always loses; ``EvictionPolicy/frequencyAware``). Under
    /// concurrent writes the victim compared against may be gone by the time the
    /// write evicts: the comparison is TinyLFU's, not a guarantee. Counts what it declines.
    @usableFromInline
    func declines(_ key: String, hash h: UInt64, cost: Int) -> Bool {
        guard let frequencies,
              itemCount.load(ordering: .relaxed) >= countLimit || costSum.load(ordering: .relaxed) &+ cost > costLimit,
              !withShard(h, { shard in shard.withLock { $0.position(of: key, hash: h) != nil } }),
              let victim = leastRecentlyUsedHash() else { return false }
        let admitted = frequencies.withLock { $0.admits(h, over: victim) }
        if !admitted { declined.add(1, ordering: .relaxed) }
        return !admitted
    }

    /// The hash of the cache's least recently used item (the next eviction's victim), or nil
    /// when the cache is empty.
    func leastRecentlyUsedHash() -> UInt64? {
        guard let (best, _) = oldestShard() else { return nil }
        return shards[best].withLock { list in list.tail >= 0 ? list.entries[Int(list.tail)].hash : nil }
    }
}
