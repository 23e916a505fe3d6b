import Foundation

/// Everything a ``CaskCache`` can be configured with, with sensible defaults.
public struct CacheOptions: Sendable {
    /// The disk layer (durability, compression, limits, compaction). Default: a 1 GiB byte limit
    /// (1 GiB of cached data; its files stay under 1.55 GiB: ``StoreOptions/diskLimit``).
    public var disk: StoreOptions = {
        var o = StoreOptions()
        o.limits.byteLimit = 1 << 30
        return o
    }()
    /// The memory layer: default 10,000 items or 64 MiB of encoded bytes.
    public var memory = MemoryCache<any Sendable>.Limits(countLimit: 10_000, costLimit: 64 << 20)
    /// How values are encoded on disk. Default JSON.
    public var coder: any CacheCoder = JSONCacheCoder()
    /// Called for every ``CacheEvent``, outside every lock, on the thread that caused it.
    public var eventHandler: (@Sendable (CacheEvent) -> Void)?
    /// A tier shared with the cache's other processes and machines (Redis, with the
    /// `CaskRedis` package), below the memory and disk layers: `async` reads that miss locally
    /// read through it, every write and removal is sent to it after the local one, and other
    /// nodes' changes remove the local copies they make stale (see <doc:ManyMachines>). When
    /// set, the local copies found at open are dropped (they may have missed changes while the
    /// process was down). Default nil: this process's layers only.
    public var sharedTier: (any SharedTier)?
    /// The longest a read waits for the shared tier before it answers from the local layers
    /// alone (a miss). A send of a change (in the background) may take 20 times as long, at
    /// least 5 s and at most a minute, before it is retried. Default 250 ms.
    public var sharedTierTimeout: Duration = .milliseconds(250)
    /// After a failed shared-tier call, how long reads skip the tier (the circuit breaker),
    /// and the first delay before a failed send is retried (doubling to 32 ×, with jitter).
    /// Default 1 s.
    public var sharedTierRetryDelay: Duration = .seconds(1)
    /// This node's identifier in ``SharedVersion``s: it orders two nodes' writes of the same
    /// millisecond. Default random; give each node a distinct one when you can.
    public var sharedTierNode: UInt32 = .random(in: 1...UInt32.max)
    /// One load per key across the nodes of a shared tier: when set, a get-or-load that finds
    /// no fresh value anywhere first claims the key's load in the tier
    /// (``SharedTier/claimLoad(of:for:)``) for at most this long. The node that gets the
    /// claim runs the loader; the others wait for its value to reach the tier (polling it,
    /// 5 ms doubling to 100 ms) instead of loading. A waiter loads itself when the claim ends
    /// without a value (the holder's loader failed, or the holder died and the lease passed),
    /// after twice the lease at most, or at once when the tier cannot be reached. Choose a
    /// lease a little longer than a slow load. Default nil: every node loads for itself.
    public var sharedTierLoadLease: Duration?

    public init() {}
}

/// Something that happened to items of a ``CaskCache``, in order per operation.
public enum CacheEvent: Sendable, Equatable {
    case willAdd(key: String)
    case didAdd(key: String)
    case willRemove(key: String)
    case didRemove(key: String)
    case didRemoveAll
    /// A layer dropped the item because of a limit, its TTL or damage.
    case evicted(key: String, layer: Layer, cause: EvictionCause)

    public enum Layer: String, Sendable { case memory, disk }
}

/// Hits, misses and sizes of both layers at one moment.
public struct CacheStatistics: Sendable {
    public var memoryHits: Int
    public var memoryMisses: Int
    public var memoryItems: Int
    /// Sum of the memory items' costs (their encoded sizes, bytes).
    public var memoryCost: Int
    /// The disk layer's own statistics (its hits are reads the memory layer missed).
    public var disk: StoreStatistics
}
