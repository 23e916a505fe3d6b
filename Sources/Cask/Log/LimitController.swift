import CaskSupport

/// The limit controller: what eviction in order keeps between one write and the next, and how
/// often keys were asked for (the frequency-aware policy's sketch).
///
/// Owns the candidates the last walk of the index left (``EvictionCandidates``) and the
/// generation that invalidates them: a change of a pin can lower a key's rank, so every list
/// taken before it is dropped. Invariant: a kept list has candidates left and belongs to the
/// current generation (``invariantViolation()``). The limits themselves are
/// ``StoreOptions/limits``; the targets follow from them and the files
/// (``StoreState/liveByteTarget``), so nothing here moves with the write rate.
///
/// Not thread-safe: a part of ``StoreState``, changed under the store's lock.
struct LimitController {
    /// What the last eviction walk left to evict, for the next eviction (StoreState+Eviction.swift).
    private(set) var candidates: EvictionCandidates?
    /// Changes with every pin change: a list of candidates from before one is dropped.
    private(set) var generation: UInt64 = 0
    /// Requests per key hash and the admission contest under ``EvictionPolicy/frequencyAware``;
    /// nil under LRU.
    private(set) var admission: TinyLFUAdmission?

    init(countsRequests: Bool) {
        admission = countsRequests ? TinyLFUAdmission(capacity: 1024) : nil
    }

    /// Whether the store counts requests (``EvictionPolicy/frequencyAware``).
    var countsRequests: Bool { admission != nil }

    /// Counts a request (a read, hit or miss: `missed`) for the key of `hash`, in a store of
    /// `keys` items (the sketch grows with it). O(1), amortized.
    mutating func noteRequest(_ hash: UInt64, keys: Int, missed: Bool) {
        admission?.noteRequest(hash, keys: keys, missed: missed)
    }

    /// Notes that a limit evicted the key of `hash` (``TinyLFUAdmission/noteEviction(_:)``).
    mutating func noteEviction(_ hash: UInt64) {
        admission?.noteEviction(hash)
    }

    /// Whether a new key of `hash` may displace the item of `victimHash`
    /// (``TinyLFUAdmission/admits(_:over:)``). Always true under LRU.
    mutating func admits(_ hash: UInt64, over victimHash: UInt64) -> Bool {
        admission?.admits(hash, over: victimHash) ?? true
    }

    /// Keeps `list` for the next eviction, when it has candidates left and was taken in the
    /// current generation; otherwise drops what was kept. Returns whether it was kept.
    @discardableResult
    mutating func keep(_ list: EvictionCandidates) -> Bool {
        guard list.remaining > 0, list.generation == generation else {
            candidates = nil
            return false
        }
        candidates = list
        return true
    }

    /// The kept list, no longer kept.
    mutating func take() -> EvictionCandidates? {
        defer { candidates = nil }
        return candidates
    }

    /// A pin changed: every list taken before now is stale.
    mutating func pinsChanged() {
        generation &+= 1
        candidates = nil
    }

    /// A description of the first broken invariant, nil when all hold. O(1).
    func invariantViolation() -> String? {
        guard let c = candidates else { return nil }
        if c.remaining <= 0 { return "kept an empty candidate list" }
        if c.generation != generation { return "kept candidates of generation \(c.generation), now \(generation)" }
        return nil
    }
}
