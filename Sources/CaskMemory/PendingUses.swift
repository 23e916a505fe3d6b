/// Uses of a shard's items that the layer below has not been told of yet: the cache facade's
/// memory hits, which its disk layer must count (LRU order, age limit) before it next decides
/// anything by access time (``MemoryCache/takeUses()``). Kept by each shard of a cache made with
/// `tracksUses`, under the shard's lock.
@usableFromInline
struct PendingUses {
    /// The time of each node's latest untold use (milliseconds), ``none`` when it has none.
    @usableFromInline var times: [Int64] = []
    /// Nodes that got an untold use (a node appears again only after it was taken or removed).
    @usableFromInline var nodes: [Int32] = []
    /// Untold uses of items removed since: (key, milliseconds).
    @usableFromInline var orphans: [(String, Int64)] = []

    /// Uses recorded since the shard was made (never reset): the facade's memory hits answered
    /// from memory alone, counted under the shard's lock instead of in a shared counter.
    @usableFromInline var recorded = 0

    @usableFromInline static let none = Int64.min

    @inlinable init() {}

    /// Records a use of node `i` at `time`: inline when the node already has an untold use
    /// (the common case of a hot item), else through ``recordFirst(_:at:)``.
    @inlinable @inline(__always)
    mutating func record(_ i: Int32, at time: Int64) {
        let n = Int(i)
        if n < times.count && times[n] != Self.none {
            recorded &+= 1
            times[n] = time
        } else {
            recordFirst(i, at: time)
        }
    }

    /// ``record(_:at:)`` for a node without an untold use.
    @usableFromInline @inline(never)
    mutating func recordFirst(_ i: Int32, at time: Int64) {
        let n = Int(i)
        recorded &+= 1
        if n >= times.count { times.append(contentsOf: repeatElement(Self.none, count: n + 1 - times.count)) }
        if times[n] == Self.none { nodes.append(i) }
        times[n] = time
    }

    /// Node `i`, holding `key`, leaves the list: its untold use, if any, is kept by key.
    @inlinable
    mutating func nodeRemoved(_ i: Int32, key: String) {
        let n = Int(i)
        guard n < times.count, times[n] != Self.none else { return }
        orphans.append((key, times[n]))
        times[n] = Self.none
    }

    /// Every node left the list (it was emptied after each node was removed).
    @inlinable
    mutating func forgetNodes() {
        times = []
        nodes = []
    }

    /// Moves every untold use into `out`, the nodes' keys from `key(of:)`.
    mutating func take(into out: inout [(String, Int64)], key: (Int32) -> String) {
        for i in nodes where times[Int(i)] != Self.none {
            out.append((key(i), times[Int(i)]))
            times[Int(i)] = Self.none
        }
        nodes.removeAll(keepingCapacity: true)
        out.append(contentsOf: orphans)
        orphans.removeAll(keepingCapacity: true)
    }
}
