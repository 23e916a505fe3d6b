/// The hashes of the last keys that left (or were kept out of) a cache, oldest forgotten first:
/// a ghost list in ARC's sense. Only the hashes are kept, 8 bytes each plus a dictionary slot.
///
/// A hash removed before it is forgotten leaves its ring slot behind until the ring comes round
/// to it, so the list may hold fewer than `capacity` hashes. Not thread-safe: the owner
/// serializes access.
package struct GhostList: Sendable {
    /// Hashes in insertion order, round from `next`.
    private var ring: [UInt64] = []
    /// Where each held hash is in `ring`.
    private var slots: [UInt64: Int] = [:]
    /// The ring slot the next insertion overwrites, once the ring is full.
    private var next = 0
    /// Most hashes held.
    package private(set) var capacity: Int

    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Hashes held now.
    package var count: Int { slots.count }

    /// Adds `hash` (nothing if it is held), forgetting the oldest when full. O(1) amortized.
    package mutating func insert(_ hash: UInt64) {
        guard slots[hash] == nil else { return }
        if ring.count < capacity {
            slots[hash] = ring.count
            ring.append(hash)
            return
        }
        let old = ring[next]
        if slots[old] == next { slots[old] = nil }
        ring[next] = hash
        slots[hash] = next
        next = (next + 1) % capacity
    }

    /// Whether `hash` is held. O(1).
    package func contains(_ hash: UInt64) -> Bool { slots[hash] != nil }

    /// Removes `hash`; whether it was held. O(1).
    package mutating func remove(_ hash: UInt64) -> Bool {
        slots.removeValue(forKey: hash) != nil
    }

    /// Sizes the list for `capacity` hashes: emptied and resized when that is more than twice or
    /// less than half the present capacity, else unchanged. O(1) but for the resize.
    package mutating func ensureCapacity(_ capacity: Int) {
        let wanted = max(1, capacity)
        guard wanted > 2 * self.capacity || 2 * wanted < self.capacity else { return }
        self = GhostList(capacity: wanted)
    }
}
