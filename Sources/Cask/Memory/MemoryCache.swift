import CCaskSupport
import Foundation

/// An in-memory LRU cache of any `Sendable` values, with count, cost and age limits.
///
/// ```swift
/// let cache = MemoryCache<Data>(limits: .init(countLimit: 10_000, costLimit: 64 << 20))
/// cache.setValue(data, forKey: "k", cost: data.count)
/// let hit = cache.value(forKey: "k")
/// ```
///
/// Every operation is O(1) (trims are O(items removed)). Thread-safe and `Sendable`: keys are
/// spread over `shards` independently locked LRU lists, so threads working on different keys
/// rarely wait for each other. The least recently used item goes first *within its shard*;
/// with `shards: 1` the order is exactly global. Limits are shared evenly between shards.
public final class MemoryCache<Value: Sendable>: Sendable {
    /// Limits of a ``MemoryCache``. Nil means no limit.
    public struct Limits: Sendable, Equatable {
        /// Most items held.
        public var countLimit: Int?
        /// Most total cost (a number the caller gives per item, typically bytes).
        public var costLimit: Int?
        /// An item not read or written for longer than this is gone.
        public var ageLimit: Duration?
        /// How often a background timer trims expired items; nil = only on access.
        public var autoTrimInterval: Duration?

        public init(countLimit: Int? = nil, costLimit: Int? = nil, ageLimit: Duration? = nil, autoTrimInterval: Duration? = nil) {
            self.countLimit = countLimit
            self.costLimit = costLimit
            self.ageLimit = ageLimit
            self.autoTrimInterval = autoTrimInterval
        }
    }

    /// Why an item left the memory cache without being removed by the caller.
    public enum EvictionCause: String, Sendable { case count, cost, age, memoryPressure }

    @usableFromInline let shards: [Locked<LRUList<Value>>]
    @usableFromInline let shardMask: Int
    @usableFromInline let seed = UInt64.random(in: .min ... .max)
    /// The limits (per cache, not per shard).
    public let limits: Limits
    @usableFromInline let clock: WallClock
    @usableFromInline let onEviction: (@Sendable (String, Value, EvictionCause) -> Void)?
    private let ticker: BackgroundTicker?

    /// Creates an empty cache.
    /// - Parameters:
    ///   - shards: independently locked parts (rounded up to a power of two, 1 ... 64). Default 32.
    ///   - onEviction: called (outside every lock) for each item a limit or memory pressure drops.
    public init(limits: Limits = Limits(), shards: Int = 32, clock: WallClock = .system,
                onEviction: (@Sendable (String, Value, EvictionCause) -> Void)? = nil) {
        var n = 1
        while n < min(max(shards, 1), 64) { n *= 2 }
        self.shards = (0..<n).map { _ in Locked(LRUList<Value>()) }
        self.shardMask = n - 1
        self.limits = limits
        self.clock = clock
        self.onEviction = onEviction
        if let interval = limits.autoTrimInterval {
            let box = WeakMemoryCacheBox<Value>()
            self.ticker = BackgroundTicker(interval: interval, name: "cask.memory-trim") {
                guard let cache = box.cache else { return false }
                cache.trimExpired()
                return true
            }
            box.cache = self
        } else {
            self.ticker = nil
        }
    }

    deinit { ticker?.stop() }

    @inlinable @inline(__always)
    func shard(_ key: String) -> Locked<LRUList<Value>> {
        if shardMask == 0 { return shards[0] }
        let h = withUTF8(key) { cask_hash64($0.baseAddress, $0.count, seed) }
        return shards[Int(truncatingIfNeeded: h) & shardMask]
    }

    private var shardCountLimit: Int? { limits.countLimit.map { ($0 + shardMask) / (shardMask + 1) } }
    private var shardCostLimit: Int? { limits.costLimit.map { ($0 + shardMask) / (shardMask + 1) } }
    @usableFromInline var ageMilliseconds: Int64 { limits.ageLimit?.milliseconds ?? 0 }

    // MARK: Access

    /// The value for `key`, or nil (absent or older than the age limit). Makes it the most
    /// recently used.
    @inlinable
    public func value(forKey key: String) -> Value? {
        let age = ageMilliseconds
        let now = age > 0 ? clock.milliseconds() : 0
        var expired: Value?
        let found: Value? = shard(key).withLock { list in
            guard let i = list.position(of: key) else { return nil }
            if age > 0 && now - list.node(i).accessTime > age {
                expired = list.remove(key)?.value
                return nil
            }
            _ = list.touch(key, now: now)
            return list.node(i).value
        }
        if let expired { onEviction?(key, expired, .age) }
        return found
    }

    /// Stores `value` as the most recently used item, then drops least recently used items while
    /// the shard is over its count or cost limit.
    public func setValue(_ value: Value, forKey key: String, cost: Int = 0) {
        let now = limits.ageLimit != nil ? clock.milliseconds() : 0
        let countLimit = shardCountLimit, costLimit = shardCostLimit
        var evicted: [(String, Value, EvictionCause)] = []
        shard(key).withLock { list in
            list.set(key, value, cost: max(0, cost), now: now)
            while let c = countLimit, list.count > c, let n = list.removeLeastRecentlyUsed() {
                evicted.append((n.key, n.value!, .count))
            }
            while let c = costLimit, list.totalCost > c, list.count > 0, let n = list.removeLeastRecentlyUsed() {
                evicted.append((n.key, n.value!, .cost))
            }
        }
        if let onEviction { for (k, v, c) in evicted { onEviction(k, v, c) } }
    }

    /// Removes `key`; returns its value.
    @discardableResult
    public func removeValue(forKey key: String) -> Value? {
        shard(key).withLock { $0.remove(key)?.value }
    }

    /// Whether `key` is held (and not aged out). Does not change the LRU order.
    public func contains(_ key: String) -> Bool {
        let age = ageMilliseconds
        let now = age > 0 ? clock.milliseconds() : 0
        return shard(key).withLock { list in
            guard let i = list.position(of: key) else { return false }
            return age == 0 || now - list.node(i).accessTime <= age
        }
    }

    /// Removes every item.
    public func removeAll() {
        for s in shards { s.withLock { $0.removeAll() } }
    }

    /// Number of items.
    public var count: Int { shards.reduce(0) { $0 + $1.withLock { $0.count } } }

    /// Sum of the items' costs.
    public var totalCost: Int { shards.reduce(0) { $0 + $1.withLock { $0.totalCost } } }

    // MARK: Trimming

    private func trim(_ cause: EvictionCause, while shouldRemove: (LRUList<Value>) -> Bool) {
        var evicted: [(String, Value)] = []
        for s in shards {
            s.withLock { list in
                while list.count > 0 && shouldRemove(list), let n = list.removeLeastRecentlyUsed() {
                    evicted.append((n.key, n.value!))
                }
            }
        }
        if let onEviction { for (k, v) in evicted { onEviction(k, v, cause) } }
    }

    /// Removes least recently used items until at most `count` remain (shared evenly by shards).
    public func trim(toCount count: Int) {
        let perShard = (max(0, count) + shardMask) / (shardMask + 1)
        trim(.count) { $0.count > perShard }
    }

    /// Removes least recently used items until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        let perShard = (max(0, cost) + shardMask) / (shardMask + 1)
        trim(.cost) { $0.totalCost > perShard }
    }

    /// Removes items not read or written within `age`.
    public func trim(toAge age: Duration) {
        let cutoff = clock.milliseconds() - age.milliseconds
        trim(.age) { $0.node($0.tail).accessTime < cutoff }
    }

    /// Removes items past the age limit (the automatic trim does this).
    public func trimExpired() {
        if let age = limits.ageLimit { trim(toAge: age) }
    }

    /// Frees memory when the system asks: removes every item. On Apple platforms the facade
    /// wires this to the system's memory-pressure source; on Linux the app calls it.
    public func handleMemoryPressure() {
        var evicted: [(String, Value)] = []
        for s in shards {
            s.withLock { list in
                while let n = list.removeLeastRecentlyUsed() { evicted.append((n.key, n.value!)) }
            }
        }
        if let onEviction { for (k, v) in evicted { onEviction(k, v, .memoryPressure) } }
    }
}

private final class WeakMemoryCacheBox<Value: Sendable>: @unchecked Sendable {
    // Written once in MemoryCache.init before the first tick can read it; weak loads are atomic.
    weak var cache: MemoryCache<Value>?
}
