/// The LRU order and storage of one memory-cache shard: a doubly linked list threaded through
/// dense node arrays (indices, not pointers; each node's item and its place in the order in
/// arrays of their own), plus an open-addressing table from key to node.
/// The table takes the 64-bit hash the cache already computed to choose the shard (one hash per
/// call, not a second `String` hash), keeps a 32-bit fingerprint per slot, and compares keys only
/// on a fingerprint match. Every operation is O(1); after warm-up, reads and overwrites allocate
/// nothing (freed nodes are reused).
///
/// Each node carries the cache-wide `stamp` of its last use (``MemoryCache``'s use stamps, read
/// from the processor's counter), so that the cache can compare the least recently used nodes of
/// different shards.
/// Not thread-safe: each shard uses it under its own lock.
@usableFromInline
struct LRUList<Value> {
    /// A node's item: what a lookup reads. Written only by inserts, overwrites and removals.
    @usableFromInline
    struct Entry {
        @usableFromInline var key: String
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        /// The key's hash (for moving its slot when the table grows or a slot is freed).
        @usableFromInline var hash: UInt64

        @inlinable
        init(key: String, hash: UInt64, value: Value?, cost: Int) {
            self.key = key
            self.hash = hash
            self.value = value
            self.cost = cost
        }
    }

    /// A node's place in the LRU order: what every use writes. Kept apart from ``Entry`` so
    /// that applying the reads' buffered uses (``MemoryShard``) does not dirty the cache lines
    /// that lookups on other CPUs read.
    @usableFromInline
    struct Order {
        /// Milliseconds since the Unix epoch of the last read or write (the cache's clock).
        @usableFromInline var accessTime: Int64
        /// Cache-wide order of the last read or write: higher is more recent.
        @usableFromInline var stamp: UInt64
        @usableFromInline var previous: Int32
        @usableFromInline var next: Int32

        @inlinable
        init(accessTime: Int64, stamp: UInt64, previous: Int32, next: Int32) {
            self.accessTime = accessTime
            self.stamp = stamp
            self.previous = previous
            self.next = next
        }
    }

    // Read by lookups under any stripe (kept together, ahead of what uses write).
    @usableFromInline var entries: ContiguousArray<Entry> = []
    /// Open addressing, linear probing: 0 = empty, else fingerprint (hash >> 32) << 32 | node + 1.
    @usableFromInline var slots: [UInt64] = [UInt64](repeating: 0, count: 16)
    @usableFromInline var slotMask = 15
    /// Least recently used.
    @usableFromInline var tail: Int32 = -1
    @usableFromInline var order: ContiguousArray<Order> = []
    // Written by inserts and removals only (also a gap of at least 64 bytes between the fields
    // above and `head`, which every applied use writes).
    @usableFromInline var freeList: [Int32] = []
    @usableFromInline var count = 0
    /// Sum of the nodes' costs (each at most ``MemoryCache/maximumCost``, so the sum cannot overflow in practice; wrapping arithmetic keeps it exact whenever the true sum fits).
    @usableFromInline var totalCost = 0
    /// Uses not yet told to the layer below (only in a cache made with `tracksUses`).
    @usableFromInline var uses: PendingUses?
    /// Most recently used.
    @usableFromInline var head: Int32 = -1

    @inlinable init() {}

    /// Whether a node last used at `accessTime` is past an age limit of `ageMilliseconds`
    /// (none when negative) at `now`: used more than the limit ago. The one rule the cache's
    /// reads, writes and trims share.
    @inlinable @inline(__always)
    static func isAgedOut(accessTime: Int64, now: Int64, ageMilliseconds: Int64) -> Bool {
        ageMilliseconds >= 0 && now - accessTime > ageMilliseconds
    }

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
            if s >> 32 == fingerprint && entries[Int(s & 0xFFFF_FFFF) - 1].key == key { return i }
            i = (i + 1) & slotMask
        }
    }

    /// The node for `key` (whose hash is `hash`) without changing the order.
    @inlinable @inline(__always)
    func position(of key: String, hash: UInt64) -> Int32? {
        slot(of: key, hash: hash).map { Int32(truncatingIfNeeded: slots[$0] & 0xFFFF_FFFF) - 1 }
    }

    /// The stamp of the least recently used node; `UInt64.max` when empty.
    @inlinable var oldestStamp: UInt64 { tail >= 0 ? order[Int(tail)].stamp : .max }

    /// Marks node `i` as used now and moves it to the front.
    @inlinable @inline(__always)
    mutating func touch(_ i: Int32, now: Int64, stamp: UInt64) {
        order[Int(i)].accessTime = now
        order[Int(i)].stamp = stamp
        moveToFront(i)
    }

    /// Applies a use buffered by a read (``MemoryShard``), as the read would have touched the
    /// node itself: uses are applied in stamp order, so the last one applied is the latest.
    @inlinable
    mutating func apply(_ use: BufferedUse) {
        touch(use.node, now: use.time, stamp: use.stamp)
        if use.isRecorded { uses!.record(use.node, at: use.time) }
    }

    /// Inserts or replaces `key` at the front. Returns the replaced item's cost and value.
    @inlinable
    @discardableResult
    mutating func set(_ key: String, hash: UInt64, _ value: Value, cost: Int, now: Int64, stamp: UInt64) -> (cost: Int, value: Value?)? {
        if let i = position(of: key, hash: hash) {
            let old = (cost: entries[Int(i)].cost, value: entries[Int(i)].value)
            totalCost = totalCost &- old.cost &+ cost
            entries[Int(i)].value = value
            entries[Int(i)].cost = cost
            touch(i, now: now, stamp: stamp)
            return old
        }
        let entry = Entry(key: key, hash: hash, value: value, cost: cost)
        let place = Order(accessTime: now, stamp: stamp, previous: -1, next: head)
        let i: Int32
        if let free = freeList.popLast() {
            i = free
            entries[Int(i)] = entry
            order[Int(i)] = place
        } else {
            i = Int32(entries.count)
            entries.append(entry)
            order.append(place)
        }
        if head >= 0 { order[Int(head)].previous = i }
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
        let removed = (cost: entries[Int(i)].cost, value: entries[Int(i)].value)
        unlink(i)
        return removed
    }

    /// Removes the least recently used node.
    @inlinable
    mutating func removeLeastRecentlyUsed() -> Entry? {
        guard tail >= 0 else { return nil }
        let i = tail
        var slot = home(entries[Int(i)].hash)
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
            let home = home(entries[Int(slots[i] & 0xFFFF_FFFF) - 1].hash)
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
            var i = home(entries[Int(s & 0xFFFF_FFFF) - 1].hash)
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
    mutating func unlink(_ i: Int32) -> Entry {
        let n = entries[Int(i)]
        let place = order[Int(i)]
        if uses != nil { uses!.nodeRemoved(i, key: n.key) }
        if place.previous >= 0 { order[Int(place.previous)].next = place.next } else { head = place.next }
        if place.next >= 0 { order[Int(place.next)].previous = place.previous } else { tail = place.previous }
        entries[Int(i)].value = nil
        entries[Int(i)].key = ""
        freeList.append(i)
        count -= 1
        totalCost &-= n.cost
        return n
    }

    @inlinable @inline(__always)
    mutating func moveToFront(_ i: Int32) {
        guard head != i else { return }
        let previous = order[Int(i)].previous, next = order[Int(i)].next
        if previous >= 0 { order[Int(previous)].next = next }
        if next >= 0 { order[Int(next)].previous = previous } else { tail = previous }
        order[Int(i)].previous = -1
        order[Int(i)].next = head
        order[Int(head)].previous = i
        head = i
    }
}
