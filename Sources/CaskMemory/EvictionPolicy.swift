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
    /// was asked for more often than the least recently used item it would evict (when that
    /// item was never asked for, it is stored, as under LRU). A declined write stores nothing:
    /// a disk store's put returns normally (``StoreStatistics/admissionsDeclined``), a
    /// ``MemoryCache``'s `setValue` returns false (``MemoryCache/admissionsDeclined``); a later
    /// read misses. A key asked for again soon wins its place. Overwrites are never declined,
    /// nor, in a disk store, pinned puts and puts into a store without a byte limit. Where what
    /// is popular changes faster than the cache turns over, this policy serves fewer hits than
    /// LRU: keys that were popular keep their counts until the sketch halves them (0.78 of an
    /// exact LRU's hits on the hit-ratio benchmark's shift trace, LimitsAndEviction.md).
    case frequencyAware
}
