import CCaskSupport
import CaskSupport
import Foundation
import Synchronization

/// An in-memory LRU cache of any `Sendable` values, with count, cost and age limits.
///
/// ```swift
/// let cache = MemoryCache<Data>(limits: .init(countLimit: 10_000, costLimit: 64 << 20))
/// cache.setValue(data, forKey: "k", cost: data.count)
/// let hit = cache.value(forKey: "k")
/// ```
///
/// **Limits are exact and global**, whatever the number of shards: after a `setValue` returns
/// (and no other call is in flight), the cache holds at most `countLimit` items whose costs add
/// up to at most `costLimit`. When a limit is exceeded, the least recently used item of the
/// whole cache goes first: every read and write stamps its item with a reading of the
/// processor's constant-rate counter (`rdtsc` on x86), and eviction takes the item with the
/// lowest stamp (calls that overlap in time from different threads are ordered by when they read
/// the counter; on the rare machine whose kernel does not keep the CPUs' counters synchronized,
/// to within their skew). An item whose own cost is above `costLimit` is refused (see
/// ``setValue(_:forKey:cost:)``).
///
/// Every operation is O(1) (trims are O(items removed) plus O(shards) per item). Thread-safe and
/// `Sendable`: keys are spread over `shards` independently locked LRU lists, so threads working
/// on different keys rarely wait for each other; the counts and costs are shared atomics. Each
/// shard has a lock per CPU: a read takes only its CPU's and notes its use there, so reads on
/// different CPUs (of the same keys too) write no shared memory; a write takes all of them and
/// first applies the noted uses, in stamp order, so the order a write or an eviction sees is
/// exact.
public final class MemoryCache<Value: Sendable>: Sendable {
    /// Limits of a ``MemoryCache``. Nil means no limit; `Int.max` works as "no limit" too, and
    /// negative numbers count as 0.
    public struct Limits: Sendable, Equatable {
        /// Most items held.
        public var countLimit: Int?
        /// Most total cost (a number the caller gives per item, typically bytes).
        public var costLimit: Int?
        /// An item not read or written for longer than this (by the cache's clock, to the
        /// millisecond) is never returned again; its memory is freed when it is next looked up,
        /// trimmed, or reached by the automatic trim.
        public var ageLimit: Duration?
        /// How often a background timer removes items past the age limit; nil = only on access
        /// and explicit trims.
        public var autoTrimInterval: Duration?
        /// Which items a full cache keeps (``EvictionPolicy``). Under
        /// ``EvictionPolicy/frequencyAware`` every read also counts its key in a sketch behind
        /// one cache-wide lock, so reads no longer scale across threads as they do under
        /// ``EvictionPolicy/leastRecentlyUsed`` (the default): measured, 0.66 of LRU's hot reads
        /// on one thread and 0.24 on two (LimitsAndEviction.md, "Policies").
        public var policy: EvictionPolicy

        public init(countLimit: Int? = nil, costLimit: Int? = nil, ageLimit: Duration? = nil, autoTrimInterval: Duration? = nil,
                    policy: EvictionPolicy = .leastRecentlyUsed) {
            self.countLimit = countLimit
            self.costLimit = costLimit
            self.ageLimit = ageLimit
            self.autoTrimInterval = autoTrimInterval
            self.policy = policy
        }
    }

    /// The largest cost an item is charged (2^40); a larger cost counts as this.
    public static var maximumCost: Int { 1 << 40 }

    @usableFromInline let shards: [MemoryShard<Value>]
    /// The same shards, reachable on the hot paths without reference counting (`shards` owns them).
    @usableFromInline let shardReferences: ContiguousArray<Unmanaged<MemoryShard<Value>>>
    @usableFromInline let shardMask: Int
    @usableFromInline let seed = UInt64.random(in: .min ... .max)
    /// The limits (of the whole cache).
    public let limits: Limits
    @usableFromInline let countLimit: Int
    @usableFromInline let costLimit: Int
    /// Milliseconds of the age limit; -1 when there is none.
    @usableFromInline let ageMilliseconds: Int64
    @usableFromInline let clock: WallClock
    @usableFromInline let onEviction: (@Sendable (String, Value, EvictionCause) -> Void)?
    /// Items held, over all shards.
    @usableFromInline let itemCount = Atomic<Int>(0)
    /// Sum of the held items' costs, over all shards.
    @usableFromInline let costSum = Atomic<Int>(0)
    /// Set after a hit is recorded for ``takeUses()``, cleared when they are taken.
    @usableFromInline let usesPending = Atomic<Bool>(false)
    /// How often each key was asked for lately, under ``EvictionPolicy/frequencyAware``; nil
    /// under LRU (MemoryCache+Admission.swift).
    let frequencies: Locked<TinyLFUAdmission>?
    /// `frequencies != nil`, for the inlined read and write paths.
    @usableFromInline let countsRequests: Bool
    /// Writes the policy declined.
    let declined = Atomic<Int>(0)
    private let ticker: BackgroundThread?

    /// Creates an empty cache.
    /// - Parameters:
    ///   - limits: the count, cost and age limits; all exact and cache-wide.
    ///   - shards: independently locked parts (rounded up to a power of two, 1 ... 64). Default 32.
    ///     Sharding changes neither the limits nor the eviction order, only how well threads
    ///     run side by side. Each shard keeps 576 bytes per CPU (counted up to 16) for its
    ///     locks and the uses its reads note.
    ///   - clock: the source of access times for the age limit and ``trim(toAge:)``. The
    ///     default, ``WallClock/system``, advances in steps of the kernel's tick (1 to 4 ms).
    ///   - onEviction: called (outside every lock, on the thread that caused it) for each item a
    ///     limit or memory pressure drops.
    public convenience init(limits: Limits = Limits(), shards: Int = 32, clock: WallClock = .system,
                onEviction: (@Sendable (String, Value, EvictionCause) -> Void)? = nil) {
        self.init(limits: limits, shards: shards, clock: clock, tracksUses: false, onEviction: onEviction)
    }

    /// `tracksUses`: hits may be recorded for ``takeUses()`` (the cache facade's).
    package init(limits: Limits, shards: Int = 32, clock: WallClock, tracksUses: Bool,
         onEviction: (@Sendable (String, Value, EvictionCause) -> Void)?) {
        var n = 1
        while n < min(max(shards, 1), 64) { n *= 2 }
        self.shards = (0..<n).map { _ in MemoryShard<Value>(tracksUses: tracksUses) }
        self.shardReferences = ContiguousArray(self.shards.map { Unmanaged.passUnretained($0) })
        self.shardMask = n - 1
        self.limits = limits
        self.countLimit = limits.countLimit.map { max(0, $0) } ?? .max
        self.costLimit = limits.costLimit.map { max(0, $0) } ?? .max
        self.ageMilliseconds = limits.ageLimit.map { max(0, $0.milliseconds) } ?? -1
        self.clock = clock
        self.onEviction = onEviction
        self.frequencies = limits.policy == .frequencyAware ? Locked(TinyLFUAdmission(capacity: 1024)) : nil
        self.countsRequests = limits.policy == .frequencyAware
        if let interval = limits.autoTrimInterval {
            let box = WeakMemoryCacheBox<Value>()
            self.ticker = BackgroundThread(name: "cask.memory-trim", interval: interval) {
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

    /// The key's hash: its low bits choose the shard, higher bits the slot in that shard's table.
    @inlinable @inline(__always)
    func hash(_ key: String) -> UInt64 {
        withUTF8(key) { cask_hash64($0.baseAddress, $0.count, seed) }
    }

    /// Runs `body` with the shard of `hash`, without retaining it (the cache keeps it alive).
    @inlinable @inline(__always)
    func withShard<R>(_ hash: UInt64, _ body: (MemoryShard<Value>) -> R) -> R {
        shardReferences[Int(truncatingIfNeeded: hash) & shardMask]._withUnsafeGuaranteedRef(body)
    }

    /// The stamp of a use starting now: cache-wide order without a shared counter (see
    /// `cask_use_stamp`).
    @inlinable @inline(__always)
    func nextUse() -> UInt64 { cask_use_stamp() }

    @inlinable @inline(__always)
    func isAgedOut(accessTime: Int64, now: Int64) -> Bool {
        LRUList<Value>.isAgedOut(accessTime: accessTime, now: now, ageMilliseconds: ageMilliseconds)
    }

    // MARK: Access

    /// The value for `key`, or nil (absent, or not used for longer than the age limit: such an
    /// item is removed now). Makes it the most recently used.
    @inlinable
    public func value(forKey key: String) -> Value? {
        value(forKey: key, now: clock.now, reading: ValueRead())
    }

    /// ``value(forKey:)`` at `now` (ms of the cache's clock), turned into its result by
    /// `reader` under the shard's lock, which records the hit for ``takeUses()`` when it says so
    /// (`tracksUses`).
    @inlinable @inline(__always)
    package func value<Reader: MemoryRead>(forKey key: String, now: Int64, reading reader: Reader) -> Reader.Result? where Reader.Value == Value {
        let h = hash(key)
        switch withShard(h, { $0.read(key, hash: h, now: now, ageMilliseconds: ageMilliseconds, reading: reader) }) {
        case .absent:
            if countsRequests { noteRequest(h, missed: true) }
            return nil
        case .found(let result, let isRecorded):
            if countsRequests { noteRequest(h, missed: false) }
            if isRecorded { noteRecordedUse() }
            return result
        case .needsWriteLock:
            let result = lockedValue(forKey: key, hash: h, now: now, use: nextUse(), reading: reader)
            if countsRequests { noteRequest(h, missed: result == nil) }
            return result
        }
    }

    /// ``value(forKey:now:reading:)`` under the shard's write lock: for the shard's least
    /// recently used item, an item that looks past the age limit, and a full read buffer.
    @inlinable
    func lockedValue<Reader: MemoryRead>(forKey key: String, hash h: UInt64, now: Int64, use: UInt64,
                                         reading reader: Reader) -> Reader.Result? where Reader.Value == Value {
        typealias R = Reader.Result
        // The item removed for its age, if any (its value and cost, not its node: an optional
        // node costs an outlined, witness-driven destroy on every lookup).
        var expiredValue: Value?
        var expiredCost = 0
        let found: (result: R, recorded: Bool)? = withShard(h) { shard in shard.withLock { list in
            guard let i = list.position(of: key, hash: h) else { return nil }
            let previousUse = list.order[Int(i)].accessTime
            if isAgedOut(accessTime: previousUse, now: now) {
                (expiredCost, expiredValue) = list.remove(key, hash: h) ?? (0, nil)
                shard.publishOldest(list)
                return nil
            }
            let wasOldest = list.tail == i
            list.touch(i, now: now, stamp: use)
            if wasOldest { shard.publishOldest(list) }
            guard let value = list.entries[Int(i)].value else { return nil }
            let (result, recordUse) = reader.read(value, previousUse: previousUse)
            guard recordUse && list.uses != nil else { return (result, false) }
            list.uses!.record(i, at: now)
            return (result, true)
        } }
        if let expiredValue {
            account(removedCount: 1, removedCost: expiredCost)
            onEviction?(key, expiredValue, .age)
        }
        guard let found else { return nil }
        if found.recorded { noteRecordedUse() }
        return found.result
    }

    /// Flags that ``takeUses()`` has something (a relaxed load, and a store only when unset).
    @inlinable @inline(__always)
    func noteRecordedUse() {
        // Sequentially consistent on the transition only (once per hand-over): a thread that
        // takes the uses and then checks the flag before it sleeps (``mayHaveUsesOrdered``)
        // and this store with the caller's check of that thread's flag next form a Dekker pair.
        if !usesPending.load(ordering: .relaxed) { usesPending.store(true, ordering: .sequentiallyConsistent) }
    }

    /// Stores `value` as the most recently used item, then removes the least recently used
    /// items of the whole cache while it is over its count or cost limit.
    ///
    /// - Parameters:
    ///   - value: the value to keep.
    ///   - key: any string, the empty one included (unlike ``DiskStore``, which needs 1 to 1,024 bytes).
    ///   - cost: what the item counts against `costLimit` (negative counts as 0, above
    ///     ``maximumCost`` as ``maximumCost``).
    /// - Returns: false when the item was refused because its cost alone is above `costLimit`
    ///   (or `countLimit` is 0). A refused item evicts nothing, and any older value of `key`
    ///   is removed (the cache never answers with a value older than the last one set).
    ///   Under ``EvictionPolicy/frequencyAware`` also false when the policy declined a new key
    ///   (``admissionsDeclined``): nothing changed then.
    @inlinable
    @discardableResult
    public func setValue(_ value: Value, forKey key: String, cost: Int = 0) -> Bool {
        guard insert(value, forKey: key, cost: cost, now: clock.now) else { return false }
        enforceLimitsIfNeeded()
        return true
    }

    /// ``setValue(_:forKey:cost:)`` as a use at `now` (milliseconds of the cache's clock),
    /// without the evictions it may call for (and so without calling `onEviction`): the caller
    /// runs ``enforceLimitsIfNeeded()`` next, outside any lock of its own.
    @inlinable
    @discardableResult
    package func insert(_ value: Value, forKey key: String, cost: Int, now: Int64) -> Bool {
        let cost = min(max(0, cost), Self.maximumCost)
        guard cost <= costLimit && countLimit > 0 else {
            removeValue(forKey: key)
            return false
        }
        let h = hash(key)
        if countsRequests && declines(key, hash: h, cost: cost) { return false }
        let use = nextUse()
        // The replaced item's cost and value (released here, outside the lock).
        let replaced: (cost: Int, value: Value?)? = withShard(h) { shard in shard.withLock { list in
            let old = list.set(key, hash: h, value, cost: cost, now: now, stamp: use)
            shard.publishOldest(list)
            return old
        } }
        if let replaced {
            costSum.wrappingAdd(cost &- replaced.cost, ordering: .relaxed)
        } else {
            itemCount.wrappingAdd(1, ordering: .relaxed)
            costSum.wrappingAdd(cost, ordering: .relaxed)
        }
        return true
    }

    /// Evicts least recently used items when the cache is over a limit.
    @inlinable
    package func enforceLimitsIfNeeded() {
        if itemCount.load(ordering: .relaxed) > countLimit || costSum.load(ordering: .relaxed) > costLimit {
            enforceLimits()
        }
    }

    /// Removes `key`; returns its value.
    @inlinable
    @discardableResult
    public func removeValue(forKey key: String) -> Value? {
        removeValue(forKey: key, where: nil)
    }

    /// Removes `key` when `shouldRemove` (nil: always) says so of its value, decided under the
    /// shard's lock, so that no write to the key comes between the check and the removal.
    /// Returns the removed value. Not an eviction: `onEviction` is not called.
    @inlinable
    @discardableResult
    package func removeValue(forKey key: String, where shouldRemove: ((Value) -> Bool)?) -> Value? {
        let h = hash(key)
        let removed = withShard(h) { shard in shard.withLock { list -> (cost: Int, value: Value?)? in
            if let shouldRemove {
                guard let i = list.position(of: key, hash: h), let value = list.entries[Int(i)].value, shouldRemove(value) else { return nil }
            }
            let removed = list.remove(key, hash: h)
            if removed != nil { shard.publishOldest(list) }
            return removed
        } }
        guard let removed else { return nil }
        account(removedCount: 1, removedCost: removed.cost)
        return removed.value
    }

    /// Whether `key` is held and not past the age limit. Not a use: the LRU order does not change.
    public func contains(_ key: String) -> Bool {
        let now = clock.now
        let h = hash(key)
        return withShard(h) { shard in
            shard.contains(key, hash: h, now: now, ageMilliseconds: ageMilliseconds) ?? shard.withLock { list in
                guard let i = list.position(of: key, hash: h) else { return false }
                return !isAgedOut(accessTime: list.order[Int(i)].accessTime, now: now)
            }
        }
    }

    /// Removes every item (no eviction events).
    public func removeAll() {
        _ = removeEverything()
    }

    /// Number of items held (items past the age limit that nobody looked up yet included).
    public var count: Int { itemCount.load(ordering: .relaxed) }

    /// Sum of the held items' costs.
    public var totalCost: Int { costSum.load(ordering: .relaxed) }
}

private final class WeakMemoryCacheBox<Value: Sendable>: @unchecked Sendable {
    // Written once in MemoryCache.init before the first tick can read it; weak loads are atomic.
    weak var cache: MemoryCache<Value>?
}
