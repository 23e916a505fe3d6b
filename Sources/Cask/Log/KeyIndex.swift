import CCaskSupport
import Dispatch
import Synchronization
import CaskFormat

/// The in-memory hash index: key -> ``IndexEntry``. Open addressing with linear probing over a
/// power-of-two table of 8-byte slots (32-bit hash fingerprint, entry number); entries live in a
/// dense array and keys in one byte arena, so an index of n keys makes no per-key allocation.
/// A key's home slot is the top bits of its hash, which the fingerprint holds: growing the table
/// and shifting a run back after a removal move slots without touching (or hashing) any key.
///
/// Memory per key: 48 (entry) + key length + 8 / load factor (0.375 ... 0.75) for the slot.
/// Not thread-safe: the store uses it under its lock.
struct KeyIndex: Sendable {
    private var slots: [UInt64]
    private var mask: Int
    /// 64 - log2(slot count): a hash's home slot is `hash >> shift`.
    private var shift: UInt64
    private(set) var entries: ContiguousArray<IndexEntry> = []
    private var keys: [UInt8] = []
    private var garbageKeyBytes = 0
    private let seed: UInt64

    init(capacity: Int = 0) {
        var size = 16
        while size * 3 / 4 < capacity { size *= 2 }
        slots = [UInt64](repeating: 0, count: size)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
        seed = UInt64.random(in: .min ... .max)
        entries.reserveCapacity(capacity)
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// Bytes of memory the index holds (tables and arena), for statistics.
    var memoryBytes: Int { slots.capacity * 8 + entries.capacity * MemoryLayout<IndexEntry>.stride + keys.capacity }

    // MARK: Lookup

    @inline(__always)
    private func hash(_ key: UnsafeRawBufferPointer) -> UInt64 {
        cask_hash64(key.baseAddress, key.count, seed)
    }

    /// The slot number holding `key`, or nil.
    /// The home slot of a hash (its top bits).
    @inline(__always)
    private func home(_ h: UInt64) -> Int { Int(truncatingIfNeeded: h >> shift) }

    /// The home slot of an occupied slot's key, from its fingerprint (the hash's top 32 bits).
    @inline(__always)
    private func home(ofSlot s: UInt64) -> Int { Int(truncatingIfNeeded: (s >> 32) >> (shift - 32)) }

    @inline(__always)
    private func find(_ key: UnsafeRawBufferPointer, hash h: UInt64) -> Int? {
        let fingerprint = h >> 32
        var i = home(h)
        return slots.withUnsafeBufferPointer { slots in
            keys.withUnsafeBytes { arena in
                entries.withUnsafeBufferPointer { entries in
                    while true {
                        let s = slots[i]
                        if s == 0 { return nil }
                        if s >> 32 == fingerprint {
                            let e = entries[Int(s & 0xFFFF_FFFF) - 1]
                            if Int(e.keyLength) == key.count
                                && (key.count == 0 || memcmp(arena.baseAddress! + Int(e.keyOffset), key.baseAddress!, key.count) == 0) {
                                return i
                            }
                        }
                        i = (i + 1) & mask
                    }
                }
            }
        }
    }

    @inline(__always)
    private func entryNumber(slot: Int) -> Int { Int(slots[slot] & 0xFFFF_FFFF) - 1 }

    /// The entry for `key` (its UTF-8 bytes), or nil.
    @inline(__always)
    func entry(forKey key: UnsafeRawBufferPointer) -> IndexEntry? {
        guard let slot = find(key, hash: hash(key)) else { return nil }
        return entries[entryNumber(slot: slot)]
    }

    /// The entry for `key`, or nil.
    func entry(forKey key: String) -> IndexEntry? {
        withUTF8(key) { entry(forKey: $0) }
    }

    /// Runs `body` on the entry for `key` in place; nil when absent.
    @inline(__always)
    mutating func withEntry<R>(forKey key: UnsafeRawBufferPointer, _ body: (inout IndexEntry) -> R) -> R? {
        guard let slot = find(key, hash: hash(key)) else { return nil }
        return body(&entries[entryNumber(slot: slot)])
    }

    // MARK: Changes

    /// Sets the entry for `key`, returning the one it replaced.
    @discardableResult
    mutating func updateValue(_ entry: IndexEntry, forKey key: UnsafeRawBufferPointer) -> IndexEntry? {
        let h = hash(key)
        if let slot = find(key, hash: h) {
            let n = entryNumber(slot: slot)
            let old = entries[n]
            var e = entry
            e.keyOffset = old.keyOffset
            e.keyLength = old.keyLength
            entries[n] = e
            return old
        }
        if (entries.count + 1) * 4 > slots.count * 3 { grow() }
        var e = entry
        e.keyOffset = UInt32(keys.count)
        e.keyLength = UInt16(key.count)
        keys.appendBytes(key)
        entries.append(e)
        var i = home(h)
        while slots[i] != 0 { i = (i + 1) & mask }
        slots[i] = (h >> 32) << 32 | UInt64(entries.count)
        return nil
    }

    @discardableResult
    mutating func updateValue(_ entry: IndexEntry, forKey key: String) -> IndexEntry? {
        withUTF8(key) { updateValue(entry, forKey: $0) }
    }

    /// Removes `key`, returning its entry.
    @discardableResult
    mutating func removeValue(forKey key: UnsafeRawBufferPointer) -> IndexEntry? {
        guard let slot = find(key, hash: hash(key)) else { return nil }
        let n = entryNumber(slot: slot)
        let removed = entries[n]
        deleteSlot(slot)
        garbageKeyBytes += Int(removed.keyLength)
        let last = entries.count - 1
        if n != last {
            // Move the last entry into the hole and repoint its slot.
            let moved = entries[last]
            let movedSlot = keys.withUnsafeBytes { arena -> Int in
                let k = UnsafeRawBufferPointer(rebasing: arena[Int(moved.keyOffset)..<(Int(moved.keyOffset) + Int(moved.keyLength))])
                return find(k, hash: hash(k))!
            }
            slots[movedSlot] = (slots[movedSlot] >> 32) << 32 | UInt64(n + 1)
            entries[n] = moved
        }
        entries.removeLast()
        if garbageKeyBytes > 1 << 20 && garbageKeyBytes * 2 > keys.count { compactKeys() }
        return removed
    }

    @discardableResult
    mutating func removeValue(forKey key: String) -> IndexEntry? {
        withUTF8(key) { removeValue(forKey: $0) }
    }

    /// Empties the index.
    mutating func removeAll() { self = KeyIndex() }

    /// Linear-probing deletion: shift later members of the run back so no probe stops early.
    private mutating func deleteSlot(_ hole: Int) {
        var hole = hole
        var i = (hole + 1) & mask
        slots[hole] = 0
        while slots[i] != 0 {
            let home = home(ofSlot: slots[i])
            // Move slot i into the hole when its home is not in (hole, i].
            let distanceToHome = (i - home) & mask
            let distanceToHole = (i - hole) & mask
            if distanceToHome >= distanceToHole {
                slots[hole] = slots[i]
                slots[i] = 0
                hole = i
            }
            i = (i + 1) & mask
        }
    }

    /// Doubles the table. Slots move by their fingerprints; no key is read.
    private mutating func grow() {
        let old = slots
        var table = [UInt64](repeating: 0, count: old.count * 2)
        mask = table.count - 1
        shift -= 1
        for s in old where s != 0 {
            var i = home(ofSlot: s)
            while table[i] != 0 { i = (i + 1) & mask }
            table[i] = s
        }
        slots = table
    }

    private mutating func compactKeys() {
        var arena: [UInt8] = []
        arena.reserveCapacity(keys.count - garbageKeyBytes)
        keys.withUnsafeBytes { old in
            for n in entries.indices {
                let e = entries[n]
                let start = Int(e.keyOffset)
                entries[n].keyOffset = UInt32(arena.count)
                arena.appendBytes(UnsafeRawBufferPointer(rebasing: old[start..<(start + Int(e.keyLength))]))
            }
        }
        keys = arena
        garbageKeyBytes = 0
    }

    // MARK: Restoring

    /// The hash table as an ``IndexSnapshot`` saves it: each slot is 0 (empty) or the key's
    /// 32-bit fingerprint above its entry number plus one; `seed` keys the hash.
    var table: (slots: [UInt64], seed: UInt64) { (slots, seed) }

    /// An index restored from an ``IndexSnapshot``: `entries`, their keys one after the other in
    /// entry order in `keys` (offsets are set here), and the saved table. Nil unless the table
    /// is a power of two no more than 3/4 full whose slots name every entry exactly once, and
    /// the keys fill `keys` exactly, and every entry is found by its own key (so a snapshot
    /// whose fingerprints or probe runs are not its keys' is refused, not half-trusted: an entry
    /// its key cannot reach could never be replaced or removed).
    init?(restoring entries: ContiguousArray<IndexEntry>, keys: [UInt8], slots: [UInt64], seed: UInt64) {
        let size = slots.count
        guard keys.count <= Int(UInt32.max), size >= 16, size & (size - 1) == 0, entries.count * 4 <= size * 3 else { return nil }
        var named = [Bool](repeating: false, count: entries.count)
        var occupied = 0
        for s in slots where s != 0 {
            let n = Int(s & 0xFFFF_FFFF) - 1
            guard n >= 0, n < entries.count, !named[n] else { return nil }
            named[n] = true
            occupied += 1
        }
        guard occupied == entries.count else { return nil }
        self.slots = slots
        self.mask = size - 1
        self.shift = UInt64(64 - size.trailingZeroBitCount)
        self.seed = seed
        self.entries = entries
        self.keys = keys
        var offset = 0
        for n in self.entries.indices {
            self.entries[n].keyOffset = UInt32(offset)
            offset += Int(self.entries[n].keyLength)
        }
        guard offset == keys.count, findsEveryEntryByItsKey() else { return nil }
    }

    /// Whether looking up each entry's key finds that very entry. Read-only, so split over the
    /// cores; the keys are hashed 16 at a time and their home slots prefetched, so that the
    /// table's cache misses overlap instead of following one another.
    private func findsEveryEntryByItsKey() -> Bool {
        let n = entries.count, chunks = n < 1 << 14 ? 1 : 8
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: chunks) { c in
            if !findsEntries((n * c / chunks)..<(n * (c + 1) / chunks)) { failures.add(1, ordering: .relaxed) }
        }
        return failures.load(ordering: .relaxed) == 0
    }

    private func findsEntries(_ range: Range<Int>) -> Bool {
        let batch = 16
        return keys.withUnsafeBytes { arena in
            slots.withUnsafeBufferPointer { table in
                withUnsafeTemporaryAllocation(of: UInt64.self, capacity: batch) { h in
                    func key(_ i: Int) -> UnsafeRawBufferPointer {
                        let e = entries[i]
                        return UnsafeRawBufferPointer(rebasing: arena[Int(e.keyOffset)..<(Int(e.keyOffset) + Int(e.keyLength))])
                    }
                    for start in stride(from: range.lowerBound, to: range.upperBound, by: batch) {
                        let end = min(range.upperBound, start + batch)
                        for i in start..<end {
                            h[i - start] = hash(key(i))
                            cask_prefetch(table.baseAddress! + home(h[i - start]))
                        }
                        for i in start..<end {
                            guard let slot = find(key(i), hash: h[i - start]), entryNumber(slot: slot) == i else { return false }
                        }
                    }
                    return true
                }
            }
        }
    }

    /// Bytes of the keys of the entries (the arena without removed keys' bytes).
    var liveKeyBytes: Int { keys.count - garbageKeyBytes }

    // MARK: Iteration

    /// The key of an entry from ``entries``.
    func key(of entry: IndexEntry) -> String {
        keys.withUnsafeBytes { arena in
            String(decoding: UnsafeRawBufferPointer(rebasing: arena[Int(entry.keyOffset)..<(Int(entry.keyOffset) + Int(entry.keyLength))]), as: UTF8.self)
        }
    }

    /// Calls `body` with every key (as bytes) and entry, in no particular order.
    func forEach(_ body: (UnsafeRawBufferPointer, IndexEntry) -> Void) {
        keys.withUnsafeBytes { arena in
            for e in entries {
                body(UnsafeRawBufferPointer(rebasing: arena[Int(e.keyOffset)..<(Int(e.keyOffset) + Int(e.keyLength))]), e)
            }
        }
    }

    /// Calls `body` with every key (as bytes) and entry in ``entries`` order, stopping at the
    /// first error.
    func forEachEntry<E: Error>(_ body: (UnsafeRawBufferPointer, IndexEntry) throws(E) -> Void) throws(E) {
        let result: Result<Void, E> = keys.withUnsafeBytes { arena in
            for e in entries {
                let key = UnsafeRawBufferPointer(rebasing: arena[Int(e.keyOffset)..<(Int(e.keyOffset) + Int(e.keyLength))])
                do throws(E) { try body(key, e) } catch { return .failure(error) }
            }
            return .success(())
        }
        try result.get()
    }

    /// The numbers of the entries (positions in ``entries``) that `include` accepts, in
    /// ascending order of their keys' bytes (`memcmp`, then length): 4 bytes per entry, no key
    /// copied.
    func entryNumbersSortedByKey(where include: (IndexEntry) -> Bool) -> [Int32] {
        var order: [Int32] = []
        order.reserveCapacity(entries.count)
        for (n, e) in entries.enumerated() where include(e) { order.append(Int32(n)) }
        keys.withUnsafeBytes { arena in
            entries.withUnsafeBufferPointer { entries in
                order.sort { a, b in
                    let x = entries[Int(a)], y = entries[Int(b)]
                    let common = min(Int(x.keyLength), Int(y.keyLength))
                    let c = common == 0 ? 0 : memcmp(arena.baseAddress! + Int(x.keyOffset), arena.baseAddress! + Int(y.keyOffset), common)
                    return c != 0 ? c < 0 : x.keyLength < y.keyLength
                }
            }
        }
        return order
    }

    /// Every key with its entry (allocates a String per key: for tools and tests).
    var all: [(key: String, entry: IndexEntry)] {
        entries.map { (key(of: $0), $0) }
    }
}


#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
