/// Which items a full cache keeps: the disk store's (``StoreLimits/policy``, at its byte limit)
/// and a ``MemoryCache``'s (``MemoryCache/Limits/policy``, at its count or cost limit).
///
/// LimitsAndEviction.md, "Policies", compares them on the same traces.
public enum EvictionPolicy: Sendable, Equatable {
    /// Every write is stored; the least recently read or written item goes first (in a disk
    /// store, exact among the candidates of a walk: LimitsAndEviction.md, "Evicting ahead of the
    /// limit"; in a ``MemoryCache``, exact).
    case leastRecentlyUsed
    /// TinyLFU admission in front of the same LRU order: the cache counts how often each key
    /// was asked for lately (reads, hits and misses, in a count-min sketch of 4-bit counters
    /// that halves them every `10 ×` the item count requests). A write of a key the cache does
    /// not hold, made when it would push the cache past its limit, is stored only when its key
    /// was asked for more often than the least recently used item it would evict, give or take
    /// a handicap the cache adapts as it runs (when that item was never asked for, it is
    /// stored, as under LRU). The handicap (0 to 16 counts, in the new key's favour) rises each
    /// time a key is asked for again soon after it was declined, and falls each time a key is
    /// asked for again after a limit evicted it, so that when what is popular changes the new
    /// popular keys get in within a few requests (ARC adapts its split the same way; Caffeine
    /// adapts its window) when they come back soon after they were declined; a large set of
    /// equally popular new keys waits until its counts pass the old keys' (LimitsAndEviction.md). A declined write stores nothing: a disk store's put returns normally
    /// (``StoreStatistics/admissionsDeclined``), a ``MemoryCache``'s `setValue` returns false
    /// (``MemoryCache/admissionsDeclined``); a later read misses. Overwrites are never declined,
    /// nor, in a disk store, pinned puts and puts into a store without a byte limit. Measured
    /// on the hit-ratio benchmark's traces against LRU: LimitsAndEviction.md, "Policies".
    /// Memory: up to about 50 bytes a key held, for the sketch and the two lists of recent hashes
    /// (the lists at most about 50 MB).
    case frequencyAware
}
