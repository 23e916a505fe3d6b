/// The LRU order and storage of one memory-cache shard: a doubly linked list threaded through a
/// dense node array (indices, not pointers), plus a dictionary from key to node. Every operation
/// is O(1); after warm-up, reads and overwrites allocate nothing (freed nodes are reused).
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

        @inlinable
        init(key: String, value: Value?, cost: Int, accessTime: Int64, stamp: UInt64, previous: Int32, next: Int32) {
            self.key = key
            self.value = value
            self.cost = cost
            self.accessTime = accessTime
            self.stamp = stamp
            self.previous = previous
            self.next = next
        }
    }

    @usableFromInline var nodes: ContiguousArray<Node> = []
    @usableFromInline var positions: [String: Int32] = [:]
    @usableFromInline var freeList: [Int32] = []
    /// Most recently used.
    @usableFromInline var head: Int32 = -1
    /// Least recently used.
    @usableFromInline var tail: Int32 = -1
    @usableFromInline var count = 0
    /// Sum of the nodes' costs (each at most ``MemoryCache/maximumCost``, so the sum cannot overflow in practice; wrapping arithmetic keeps it exact whenever the true sum fits).
    @usableFromInline var totalCost = 0

    @inlinable init() {}

    /// The node for `key` without changing the order.
    @inlinable @inline(__always)
    func position(of key: String) -> Int32? { positions[key] }

    /// The stamp of the least recently used node; `UInt64.max` when empty.
    @inlinable var oldestStamp: UInt64 { tail >= 0 ? nodes[Int(tail)].stamp : .max }

    /// Marks node `i` as used now and moves it to the front.
    @inlinable @inline(__always)
    mutating func touch(_ i: Int32, now: Int64, stamp: UInt64) {
        nodes[Int(i)].accessTime = now
        nodes[Int(i)].stamp = stamp
        moveToFront(i)
    }

    /// Inserts or replaces `key` at the front. Returns the replaced value.
    @inlinable
    @discardableResult
    mutating func set(_ key: String, _ value: Value, cost: Int, now: Int64, stamp: UInt64) -> Value? {
        if let i = positions[key] {
            let old = nodes[Int(i)].value
            totalCost = totalCost &- nodes[Int(i)].cost &+ cost
            nodes[Int(i)].value = value
            nodes[Int(i)].cost = cost
            touch(i, now: now, stamp: stamp)
            return old
        }
        let node = Node(key: key, value: value, cost: cost, accessTime: now, stamp: stamp, previous: -1, next: head)
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
        positions[key] = i
        count += 1
        totalCost &+= cost
        return nil
    }

    /// Removes `key`; returns its node (value included).
    @inlinable
    @discardableResult
    mutating func remove(_ key: String) -> Node? {
        guard let i = positions.removeValue(forKey: key) else { return nil }
        return unlink(i)
    }

    /// Removes the least recently used node.
    @inlinable
    mutating func removeLeastRecentlyUsed() -> Node? {
        guard tail >= 0 else { return nil }
        let key = nodes[Int(tail)].key
        return remove(key)
    }

    @inlinable
    mutating func removeAll() {
        self = LRUList()
    }

    @inlinable
    mutating func unlink(_ i: Int32) -> Node {
        let n = nodes[Int(i)]
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
