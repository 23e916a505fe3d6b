/// The places in ``KeyIndex``'s key arena that removed keys left, by length, for the next key of
/// the same length: a cache that evicts and inserts keys of one shape all the time reuses them
/// and never has to compact its arena (an O(n) copy under the store's lock). 4 bytes per free
/// place. Not thread-safe: the index is used under the store's lock.
struct FreeKeySlots: Sendable {
    private var byLength: [UInt16: [UInt32]] = [:]

    /// Records that `length` bytes at `offset` are free.
    mutating func add(offset: UInt32, length: UInt16) {
        byLength[length, default: []].append(offset)
    }

    /// A free place of exactly `length` bytes, now taken; nil when there is none.
    mutating func take(length: Int) -> UInt32? {
        guard length <= Int(UInt16.max) else { return nil }
        return byLength[UInt16(length)]?.popLast()
    }

    /// Forgets every free place (after the arena was compacted).
    mutating func removeAll() { byLength = [:] }

    /// Bytes of memory the lists hold, for statistics.
    var memoryBytes: Int { byLength.values.reduce(0) { $0 + $1.capacity * 4 } }
}
