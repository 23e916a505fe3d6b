import CaskFormat

/// The keys one walk of the index chose for eviction, with the ranks they had then, in the order
/// they go (lowest rank first); the keys in one flat buffer (no allocation per key).
///
/// A walk takes every key ranked at or below a threshold (``StoreState/evictionRank(_:now:ageLimit:largestFirst:)``),
/// so while nothing ranked lower appears, evicting the candidates in order is evicting in LRU
/// order. A candidate read or written since has another rank and is passed over (it ranks
/// higher now); ``StoreState/usableCandidates(now:)`` says when a list may still be used.
struct EvictionCandidates: Sendable {
    private var entries: [(rank: UInt64, offset: Int, length: Int)] = []
    private var keys: [UInt8] = []
    /// The rank the candidates were chosen at or below.
    let threshold: UInt64
    /// The clock's milliseconds at the walk (ranks depend on it: expired items rank 0).
    let takenAt: Int64
    /// ``LimitController/generation`` at the walk: a change of a pin since can lower a
    /// rank below the threshold, and the list is then dropped.
    let generation: UInt64
    /// Ranked by size, largest first, instead of by last use.
    let largestFirst: Bool
    /// The first candidate not yet looked at.
    var next = 0

    init(threshold: UInt64, takenAt: Int64, generation: UInt64, largestFirst: Bool = false) {
        self.threshold = threshold
        self.largestFirst = largestFirst
        self.takenAt = takenAt
        self.generation = generation
    }

    var count: Int { entries.count }

    /// Candidates not yet looked at.
    var remaining: Int { entries.count - next }

    /// The lowest rank an item read or written at or after the walk can have (its millisecond,
    /// unpinned). A kept list is used only up to its first candidate ranked there or above:
    /// from there on, a key new to the store since the walk could rank among the candidates
    /// without being one.
    var writeFloor: UInt64 { UInt64(max(0, takenAt - IndexEntry.epochMilliseconds)) << 22 }

    /// Whether the next candidate may still be evicted from a kept list (``writeFloor``).
    var nextIsBelowWrites: Bool { next < entries.count && entries[next].rank < writeFloor }

    /// Whether half of the list was looked at: time to walk for the next one.
    var isRunningLow: Bool { remaining * 2 < entries.count }

    mutating func add(_ key: UnsafeRawBufferPointer, rank: UInt64) {
        entries.append((rank, keys.count, key.count))
        keys.appendBytes(key)
    }

    /// Orders the candidates by rank, lowest (evicted first) first.
    mutating func sort() { entries.sort { $0.rank < $1.rank } }

    /// The rank candidate `n` had at the walk.
    func rank(_ n: Int) -> UInt64 { entries[n].rank }

    func withKey<R, E: Error>(_ n: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let e = entries[n]
        return try keys.withBytes { all throws(E) in try body(UnsafeRawBufferPointer(rebasing: all[e.offset..<(e.offset + e.length)])) }
    }
}
