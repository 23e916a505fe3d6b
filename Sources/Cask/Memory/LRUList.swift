/// The LRU order and storage of one memory-cache shard: a doubly linked list threaded through a
/// dense node array (indices, not pointers), plus a dictionary from key to node. Every operation
/// is O(1); after warm-up, reads and overwrites allocate nothing (freed nodes are reused).
/// Not thread-safe: each shard uses it under its own lock.
@usableFromInline
struct LRUList<Value> {
    @usableFromInline
    struct Node {
        @usableFromInline var key: String
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        /// Milliseconds since the Unix epoch of the last read or write.
        @usableFromInline var accessTime: Int64
        @usableFromInline var previous: Int32
        @usableFromInline var next: Int32
    }

    @usableFromInline var nodes: ContiguousArray<Node> = []
    @usableFromInline var positions: [String: Int32] = [:]
    @usableFromInline var freeList: [Int32] = []
    /// Most recently used.
    @usableFromInline var head: Int32 = -1
    /// Least recently used.
    @usableFromInline var tail: Int32 = -1
    @usableFromInline var count = 0
    @usableFromInline var totalCost = 0

    /// The node for `key`, moved to the front (most recently used).
    @inlinable @inline(__always)
    mutating func touch(_ key: String, now: Int64) -> Int32? {
        guard let i = positions[key] else { return nil }
        nodes[Int(i)].accessTime = now
        moveToFront(i)
        return i
    }

    /// The node for `key` without changing the order.
    @inlinable func position(of key: String) -> Int32? { positions[key] }

    @inlinable func node(_ i: Int32) -> Node { nodes[Int(i)] }

    /// Inserts or replaces `key` at the front. Returns the replaced value.
    @discardableResult
    mutating func set(_ key: String, _ value: Value, cost: Int, now: Int64) -> Value? {
        if let i = positions[key] {
            let old = nodes[Int(i)].value
            totalCost += cost - nodes[Int(i)].cost
            nodes[Int(i)].value = value
            nodes[Int(i)].cost = cost
            nodes[Int(i)].accessTime = now
            moveToFront(i)
            return old
        }
        let node = Node(key: key, value: value, cost: cost, accessTime: now, previous: -1, next: head)
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
        totalCost += cost
        return nil
    }

    /// Removes `key`; returns its node (value included).
    @discardableResult
    @usableFromInline
    mutating func remove(_ key: String) -> Node? {
        guard let i = positions.removeValue(forKey: key) else { return nil }
        return unlink(i)
    }

    /// Removes the least recently used node.
    mutating func removeLeastRecentlyUsed() -> Node? {
        guard tail >= 0 else { return nil }
        let key = nodes[Int(tail)].key
        return remove(key)
    }

    mutating func removeAll() {
        self = LRUList()
    }

    private mutating func unlink(_ i: Int32) -> Node {
        let n = nodes[Int(i)]
        if n.previous >= 0 { nodes[Int(n.previous)].next = n.next } else { head = n.next }
        if n.next >= 0 { nodes[Int(n.next)].previous = n.previous } else { tail = n.previous }
        nodes[Int(i)].value = nil
        nodes[Int(i)].key = ""
        freeList.append(i)
        count -= 1
        totalCost -= n.cost
        return n
    }

    @inlinable @inline(__always)
    mutating func moveToFront(_ i: Int32) {
        guard head != i else { return }
        let n = nodes[Int(i)]
        if n.previous >= 0 { nodes[Int(n.previous)].next = n.next }
        if n.next >= 0 { nodes[Int(n.next)].previous = n.previous } else { tail = n.previous }
        nodes[Int(i)].previous = -1
        nodes[Int(i)].next = head
        nodes[Int(head)].previous = i
        head = i
    }
}
