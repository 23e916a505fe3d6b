import CaskSupport
import Foundation

/// Trims on demand: by count, cost and age, and on memory pressure.
extension MemoryCache {
    /// Removes least recently used items until at most `count` remain (0 when negative).
    public func trim(toCount count: Int) {
        var evicted: [(String, Value, EvictionCause)] = []
        while itemCount.load(ordering: .relaxed) > max(0, count), let n = evictLeastRecentlyUsed() {
            evicted.append((n.key, n.value!, .count))
        }
        notify(evicted)
    }

    /// Removes least recently used items until the total cost is at most `cost` (0 when negative).
    public func trim(toCost cost: Int) {
        var evicted: [(String, Value, EvictionCause)] = []
        while costSum.load(ordering: .relaxed) > max(0, cost), let n = evictLeastRecentlyUsed() {
            evicted.append((n.key, n.value!, .cost))
        }
        notify(evicted)
    }

    /// Removes items not read or written within `age` (by the cache's clock, to the millisecond:
    /// an item used exactly `age` ago stays). Works with or without an age limit.
    public func trim(toAge age: Duration) {
        let cutoff = clock.now - max(0, age.milliseconds)
        var evicted: [(String, Value, EvictionCause)] = []
        var removedCost = 0
        for shard in shards {
            shard.withLock { list in
                // Within a shard the list is in order of use, so the aged items are at its end.
                while list.tail >= 0 && list.order[Int(list.tail)].accessTime < cutoff, let n = list.removeLeastRecentlyUsed() {
                    evicted.append((n.key, n.value!, .age))
                    removedCost &+= n.cost
                }
                shard.publishOldest(list)
            }
        }
        account(removedCount: evicted.count, removedCost: removedCost)
        notify(evicted)
    }

    /// Removes items past the age limit (the automatic trim does this).
    public func trimExpired() {
        if let age = limits.ageLimit { trim(toAge: age) }
    }

    /// Frees memory when the system asks: removes every item (with `.memoryPressure` events).
    /// On Apple platforms the facade wires this to the system's memory-pressure source; on
    /// Linux the app calls it.
    public func handleMemoryPressure() {
        notify(removeEverything().map { ($0.key, $0.value!, .memoryPressure) })
    }
}
