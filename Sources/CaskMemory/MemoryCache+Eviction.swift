import Synchronization

/// Eviction and removal of many items: the least recently used item of the whole cache, the
/// limits enforced after a write, and the counts kept in step.
extension MemoryCache {
    /// Removes and returns every node.
    func removeEverything() -> [LRUList<Value>.Entry] {
        var removed: [LRUList<Value>.Entry] = []
        var removedCost = 0
        for shard in shards {
            shard.withLock { list in
                while let n = list.removeLeastRecentlyUsed() {
                    removedCost &+= n.cost
                    removed.append(n)
                }
                list.removeAll()
                shard.publishOldest(list)
            }
        }
        account(removedCount: removed.count, removedCost: removedCost)
        return removed
    }

    /// Evicts least recently used items while the cache is over a limit. Inlinable, like the
    /// rest of the write path, so that it is specialised for the caller's `Value` (the facade's
    /// writes evict here once its memory layer is full).
    @inlinable
    func enforceLimits() {
        var evicted: [(String, Value, EvictionCause)] = []
        var evictedHashes: [UInt64] = []   // for the frequency-aware policy's ghost list
        while itemCount.load(ordering: .relaxed) > countLimit, let n = evictLeastRecentlyUsed() {
            evicted.append((n.key, n.value!, .count))
            if countsRequests { evictedHashes.append(n.hash) }
        }
        while costSum.load(ordering: .relaxed) > costLimit, let n = evictLeastRecentlyUsed() {
            evicted.append((n.key, n.value!, .cost))
            if countsRequests { evictedHashes.append(n.hash) }
        }
        if !evictedHashes.isEmpty { noteEvictions(evictedHashes) }
        notify(evicted)
    }

    /// Removes the least recently used item of the whole cache: the shard whose oldest item has
    /// the lowest use number gives it up. Nil when the cache is empty.
    @inlinable
    func evictLeastRecentlyUsed() -> LRUList<Value>.Entry? {
        var attempts = 0
        while true {
            guard let (best, bestUse) = oldestShard() else { return nil }
            attempts += 1
            let shard = shards[best]
            let victim = shard.withLock { list -> LRUList<Value>.Entry? in
                // Another thread changed this shard since the scan: look again (a few times).
                guard list.oldestStamp == bestUse || (attempts > 3 && list.count > 0) else { return nil }
                let n = list.removeLeastRecentlyUsed()
                shard.publishOldest(list)
                return n
            }
            if let victim {
                account(removedCount: 1, removedCost: victim.cost)
                return victim
            }
        }
    }

    /// The shard whose oldest item has the lowest use stamp, and that stamp, as the shards last
    /// published them (no lock): the least recently used item of the whole cache is that shard's
    /// oldest. Nil when the cache is empty.
    @inlinable
    func oldestShard() -> (index: Int, use: UInt64)? {
        var best = -1
        var bestUse = UInt64.max
        for (n, shard) in shards.enumerated() {
            let use = shard.oldestUse.load(ordering: .relaxed)
            if use < bestUse { best = n; bestUse = use }
        }
        return best >= 0 ? (best, bestUse) : nil
    }

    @usableFromInline
    func account(removedCount: Int, removedCost: Int) {
        itemCount.wrappingSubtract(removedCount, ordering: .relaxed)
        costSum.wrappingSubtract(removedCost, ordering: .relaxed)
    }

    @inlinable
    func notify(_ evicted: [(String, Value, EvictionCause)]) {
        if let onEviction { for (k, v, c) in evicted { onEviction(k, v, c) } }
    }
}
