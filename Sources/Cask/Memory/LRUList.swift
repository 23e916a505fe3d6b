/// The LRU order and storage of one memory-cache shard: a doubly linked list threaded through a
/// dense node array (indices, not pointers), plus an open-addressing table from key to node.
/// The table takes the 64-bit hash the cache already computed to choose the shard (one hash per
/// call, not a second `String` hash), keeps a 32-bit fingerprint per slot, and compares keys only
/// on a fingerprint match. Every operation is O(1); after warm-up, reads and overwrites allocate
/// nothing (freed nodes are reused).
///
/// Each node carries the cache-wide `stamp` of its last use (a counter shared by all shards), so
/// that the cache can compare the least recently used nodes of different shards.
/// Not thread-safe: each shard uses it under its own lock.
@usableFromInline
struct LRUList<Value> {
    @usableFromInline
    struct Node {
        @usableFromInline var key: String
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        /// Milliseconds since the Unix epoch of the last read or write (the cache's clock).
        @usableFromInline var accessTime: Int64
        /// Cache-wide order of the last read or write: higher is more recent.
        @usableFromInline var stamp: UInt64
        @usableFromInline var previous: Int32
        @usableFromInline var next: Int32
        /// The key's hash (for moving its slot when the table grows or a slot is freed).
        @usableFromInline var hash: UInt64

        @inlinable
        init(key: String, hash: UInt64, value: Value?, cost: Int, accessTime: Int64, stamp: UInt64, previous: Int32, next: Int32) {
            self.key = key
            self.hash = hash
            self.value = value
            self.cost = cost
            self.accessTime = accessTime
            self.stamp = stamp
            self.previous = previous
            self.next = next
        }
    }

    @usableFromInline var nodes: ContiguousArray<Node> = []
    /// Open addressing, linear probing: 0 = empty, else fingerprint (hash >> 32) << 32 | node + 1.
    @usableFromInline var slots: [UInt64] = [UInt64](repeating: 0, count: 16)
    @usableFromInline var slotMask = 15
    @usableFromInline var freeList: [Int32] = []
    /// Most recently used.
    @usableFromInline var head: Int32 = -1
    /// Least recently used.
    @usableFromInline var tail: Int32 = -1
    @usableFromInline var count = 0
    /// Uses not yet told to the layer below (only in a cache made with `tracksUses`).
    @usableFromInline var uses: PendingUses?
    /// Sum of the nodes' costs (each at most ``MemoryCache/maximumCost``, so the sum cannot overflow in practice; wrapping arithmetic keeps it exact whenever the true sum fits).
    @usableFromInline var totalCost = 0

    @inlinable init() {}

    /// The home slot of `hash` (bits above those that choose the shard).
    @inlinable @inline(__always)
    func home(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash >> 8) & slotMask }

    /// The slot holding `key` (whose hash is `hash`), or nil.
    @inlinable @inline(__always)
    func slot(of key: String, hash: UInt64) -> Int? {
        let fingerprint = hash >> 32
        var i = home(hash)
        while true {
            let s = slots[i]
            if s == 0 { return nil }
            if s >> 32 == fingerprint && nodes[Int(s & 0xFFFF_FFFF) - 1].key == key { return i }
            i = (i + 1) & slotMask
        }
    }

    /// The node for `key` (whose hash is `hash`) without changing the order.
    @inlinable @inline(__always)
    func position(of key: String, hash: UInt64) -> Int32? {
        slot(of: key, hash: hash).map { Int32(truncatingIfNeeded: slots[$0] & 0xFFFF_FFFF) - 1 }
    }

    /// The stamp of the least recently used node; `UInt64.max` when empty.
    @inlinable var oldestStamp: UInt64 { tail >= 0 ? nodes[Int(tail)].stamp : .max }

    /// Marks node `i` as used now and moves it to the front.
    @inlinable @inline(__always)
    mutating func touch(_ i: Int32, now: Int64, stamp: UInt64) {
        nodes[Int(i)].accessTime = now
        nodes[Int(i)].stamp = stamp
        moveToFront(i)
    }

    /// Inserts or replaces `key` at the front. Returns the replaced item's cost and value.
    @inlinable
    @discardableResult
    mutating func set(_ key: String, hash: UInt64, _ value: Value, cost: Int, now: Int64, stamp: UInt64) -> (cost: Int, value: Value?)? {
        if let i = position(of: key, hash: hash) {
            let old = (cost: nodes[Int(i)].cost, value: nodes[Int(i)].value)
            totalCost = totalCost &- old.cost &+ cost
            nodes[Int(i)].value = value
            nodes[Int(i)].cost = cost
            touch(i, now: now, stamp: stamp)
            return old
        }
        let node = Node(key: key, hash: hash, value: value, cost: cost, accessTime: now, stamp: stamp, previous: -1, next: head)
        let i: Int32
        if let free = freeList.popLast() {
            i = free
            nodes[Int(i)] = node
        } else {
            i = Int32(nodes.count)
            nodes.append(node)
        }
        if head >= 0 { nodes[Int(head)].previous = i }
        head = i
        if tail < 0 { tail = i }
        insertSlot(hash: hash, node: i)
        count += 1
        totalCost &+= cost
        return nil
    }

    /// Removes `key`; returns its cost and value (nil when absent).
    @inlinable
    @discardableResult
    mutating func remove(_ key: String, hash: UInt64) -> (cost: Int, value: Value?)? {
        guard let slot = slot(of: key, hash: hash) else { return nil }
        let i = Int32(truncatingIfNeeded: slots[slot] & 0xFFFF_FFFF) - 1
        deleteSlot(slot)
        let removed = (cost: nodes[Int(i)].cost, value: nodes[Int(i)].value)
        unlink(i)
        return removed
    }

    /// Removes the least recently used node.
    @inlinable
    mutating func removeLeastRecentlyUsed() -> Node? {
        guard tail >= 0 else { return nil }
        let i = tail
        var slot = home(nodes[Int(i)].hash)
        while slots[slot] & 0xFFFF_FFFF != UInt64(i + 1) { slot = (slot + 1) & slotMask }
        deleteSlot(slot)
        return unlink(i)
    }

    // MARK: Table

    @inlinable
    mutating func insertSlot(hash: UInt64, node: Int32) {
        if (count + 1) * 4 > slots.count * 3 { growSlots() }
        var i = home(hash)
        while slots[i] != 0 { i = (i + 1) & slotMask }
        slots[i] = (hash >> 32) << 32 | UInt64(node + 1)
    }

    /// Linear-probing deletion: later members of the run move back so no probe stops early.
    @inlinable
    mutating func deleteSlot(_ hole: Int) {
        var hole = hole
        var i = (hole + 1) & slotMask
        slots[hole] = 0
        while slots[i] != 0 {
            let home = home(nodes[Int(slots[i] & 0xFFFF_FFFF) - 1].hash)
            // Move slot i into the hole unless its home lies in (hole, i].
            if (i &- home) & slotMask >= (i &- hole) & slotMask {
                slots[hole] = slots[i]
                slots[i] = 0
                hole = i
            }
            i = (i + 1) & slotMask
        }
    }

    @inlinable
    mutating func growSlots() {
        let old = slots
        slots = [UInt64](repeating: 0, count: old.count * 2)
        slotMask = slots.count - 1
        for s in old where s != 0 {
            var i = home(nodes[Int(s & 0xFFFF_FFFF) - 1].hash)
            while slots[i] != 0 { i = (i + 1) & slotMask }
            slots[i] = s
        }
    }

    /// Empties the list; untold uses of the nodes removed before stay (``PendingUses``).
    @inlinable
    mutating func removeAll() {
        var kept = uses
        kept?.forgetNodes()
        self = LRUList()
        uses = kept
    }

    @inlinable
    @discardableResult
    mutating func unlink(_ i: Int32) -> Node {
        let n = nodes[Int(i)]
        if uses != nil { uses!.nodeRemoved(i, key: n.key) }
        if n.previous >= 0 { nodes[Int(n.previous)].next = n.next } else { head = n.next }
        if n.next >= 0 { nodes[Int(n.next)].previous = n.previous } else { tail = n.previous }
        nodes[Int(i)].value = nil
        nodes[Int(i)].key = ""
        freeList.append(i)
        count -= 1
        totalCost &-= n.cost
        return n
    }

    @inlinable @inline(__always)
    mutating func moveToFront(_ i: Int32) {
        guard head != i else { return }
        let previous = nodes[Int(i)].previous, next = nodes[Int(i)].next
        if previous >= 0 { nodes[Int(previous)].next = next }
        if next >= 0 { nodes[Int(next)].previous = previous } else { tail = previous }
        nodes[Int(i)].previous = -1
        nodes[Int(i)].next = head
        nodes[Int(head)].previous = i
        head = i
    }
}
