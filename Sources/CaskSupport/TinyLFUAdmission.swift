/// The frequency-aware policy's admission decision, shared by the disk store and the memory
/// cache: how often keys were asked for lately (a ``FrequencySketch``) and the contest a new
/// key must win against the item eviction would take next, with a handicap that adapts to the
/// workload.
///
/// A new key is admitted when its estimate plus ``bias`` is above the victim's, or the victim
/// was never asked for (TinyLFU, with `bias` 0). The bias (0 ... 16; at 16 every key is
/// admitted, as under LRU) moves with two ghost lists, as ARC's target moves with its own:
/// - a key asked for again soon after it was declined (its hash still in ``declined``, the
///   last `items / 80` declined keys, at most 2^17) says admission was too strict: the bias
///   goes up by one;
/// - a key asked for again after eviction took it (its hash still in ``evicted``, the last
///   `items` evicted keys, at most 2^20) says recency alone keeps the wrong keys: it goes
///   down by one.
///
/// On a trace whose popularity never changes the bias stays near 0 and the policy is TinyLFU;
/// when the popular keys change, the keys just declined come back and the bias rises until new
/// keys get in, provided they come back within the last `items / 80` declines (a large set of
/// equally popular new keys does not, and waits as under plain TinyLFU). Measured on the hit-ratio benchmark's traces: LimitsAndEviction.md, "Policies".
///
/// Not thread-safe: the owner serializes access (the store's lock, the memory cache's sketch
/// lock). Memory: the sketch's 8 bytes a key, and up to about 40 bytes a key for the ghost lists
/// (a ring of hashes and a dictionary from hash to slot), at most about 50 MB for them.
package struct TinyLFUAdmission: Sendable {
    /// The largest bias: a candidate's estimate plus this beats any victim's (at most 15).
    package static let maximumBias = 16

    /// How often each key hash was asked for lately.
    package private(set) var sketch: FrequencySketch
    /// What a candidate's estimate gets added before it is compared with the victim's.
    package private(set) var bias = 0
    /// Hashes of the keys declined last.
    package private(set) var declined: GhostList
    /// Hashes of the keys evicted last.
    package private(set) var evicted: GhostList

    /// An admission decision sized for about `capacity` keys at first (it grows with
    /// ``noteRequest(_:keys:missed:)``).
    package init(capacity: Int) {
        sketch = FrequencySketch(capacity: capacity)
        declined = GhostList(capacity: Self.declinedCapacity(capacity))
        evicted = GhostList(capacity: Self.evictedCapacity(capacity))
    }

    /// Hashes ``declined`` keeps for a cache of `keys` items: the last 1/80 of them, up to 2^17.
    package static func declinedCapacity(_ keys: Int) -> Int { max(16, min(keys / 80, 1 << 17)) }
    /// Hashes ``evicted`` keeps for a cache of `keys` items: as many as it holds, up to 2^20
    /// (about 40 MB), so that a store of millions of keys does not double its memory for it.
    package static func evictedCapacity(_ keys: Int) -> Int { max(16, min(keys, 1 << 20)) }

    /// Counts a request (a read) for the key of `hash` in a cache of `keys` items; when the
    /// cache did not hold the key (`missed`), moves the bias if the key was declined or evicted
    /// lately (a hit skips the ghost lists: a held key's ghost is stale). O(1), amortized.
    package mutating func noteRequest(_ hash: UInt64, keys: Int, missed: Bool) {
        sketch.ensureCapacity(keys)
        sketch.increment(hash)
        guard missed else { return }
        declined.ensureCapacity(Self.declinedCapacity(keys))
        evicted.ensureCapacity(Self.evictedCapacity(keys))
        if declined.remove(hash) {
            bias = min(Self.maximumBias, bias + 1)
        } else if evicted.remove(hash) {
            bias = max(0, bias - 1)
        }
    }

    /// Notes that a limit evicted the key of `hash` (not an expiry or a removal). O(1).
    package mutating func noteEviction(_ hash: UInt64) {
        evicted.insert(hash)
    }

    /// Whether a new key of hash `candidate` may displace the item of hash `victim`, the one
    /// eviction would take next. A declined candidate is remembered (``declined``). O(1).
    package mutating func admits(_ candidate: UInt64, over victim: UInt64) -> Bool {
        let against = sketch.frequency(victim)
        if against == 0 || sketch.frequency(candidate) + bias > against { return true }
        declined.insert(candidate)
        return false
    }
}
