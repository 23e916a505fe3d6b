import CCaskSupport
import Dispatch
import Synchronization
import CaskFormat

/// The in-memory hash index: key -> ``IndexEntry``. Open addressing with linear probing over a
/// table of 8-byte slots (32-bit hash fingerprint, entry number); entries live in a dense array
/// of 32-byte ``StoredIndexEntry`` values and keys in one byte arena (``KeyArena``), so an index
/// of n keys makes no per-key allocation. Expiry times live in an array beside the entries,
/// allocated only once some entry has one (8 bytes per key from then on). The three arrays are
/// ``ChunkedArray``s: adding a key never copies them (a doubling copy was a 17-50 ms put at a
/// million keys).
///
/// The table of slots (fingerprint and entry number) is a ``SlotTable``, which grows
/// incrementally and moves slots without touching (or hashing) any key.
///
/// Memory per key: 32 (entry) + key length + 8 / load factor (0.5 ... 0.75) for the slot,
/// + 8 once any key has an expiry. Not thread-safe: the store uses it under its lock.
struct KeyIndex: Sendable {
    private(set) var slotTable: SlotTable
    /// The entries in entry order (read by the iteration in KeyIndex+Iteration.swift).
    private(set) var stored = ChunkedArray<StoredIndexEntry>(chunkShift: KeyIndex.entryChunkShift)
    /// Empty while no entry has an expiry; then one per entry (0 = none).
    private var expiries = ChunkedArray<Int64>(chunkShift: KeyIndex.entryChunkShift)
    /// The key bytes: each entry's key at its `keyOffset` in its arena.
    private(set) var keys = KeyStore()
    private let seed: UInt64

    static let minimumSlots = 16
    /// Entries (and expiries) per chunk: 16,384 (512 KiB of entries; at most that much unused).
    static let entryChunkShift = 14

    init(capacity: Int = 0) {
        slotTable = SlotTable(size: Self.slotCount(for: capacity))
        seed = UInt64.random(in: .min ... .max)
    }

    /// A table size that holds `count` keys at most 3/4 full (2/3 full, leaving room to grow).
    static func slotCount(for count: Int) -> Int { max(minimumSlots, count + count / 2 + 1) }

    var count: Int { stored.count }
    var isEmpty: Bool { stored.isEmpty }

    /// Bytes of memory the index holds (tables and arena), for statistics.
    var memoryBytes: Int {
        slotTable.memoryBytes + stored.memoryBytes + expiries.memoryBytes + keys.memoryBytes
    }

    /// The entry numbered `n` (`0 ..< count`; numbers change when an entry is removed).
    @inline(__always)
    func entry(at n: Int) -> IndexEntry {
        stored[n].entry(expiry: expiries.isEmpty ? 0 : expiries[n])
    }

    /// Every entry, in entry order.
    var entries: Entries { Entries(index: self) }

    struct Entries: RandomAccessCollection {
        let index: KeyIndex
        var startIndex: Int { 0 }
        var endIndex: Int { index.count }
        subscript(n: Int) -> IndexEntry { index.entry(at: n) }
    }

    @inline(__always)
    private mutating func set(_ e: IndexEntry, at n: Int) {
        stored[n] = StoredIndexEntry(e)
        if !expiries.isEmpty {
            expiries[n] = e.expiry
        } else if e.expiry != 0 {
            expiries = ChunkedArray(repeating: 0, count: stored.count, chunkShift: Self.entryChunkShift)
            expiries[n] = e.expiry
        }
    }

    private mutating func append(_ e: IndexEntry) {
        stored.append(StoredIndexEntry(e))
        if !expiries.isEmpty || e.expiry != 0 {
            if expiries.isEmpty { expiries = ChunkedArray(repeating: 0, count: stored.count - 1, chunkShift: Self.entryChunkShift) }
            expiries.append(e.expiry)
        }
    }

    // MARK: Lookup

    @inline(__always)
    func hash(_ key: UnsafeRawBufferPointer) -> UInt64 {
        cask_hash64(key.baseAddress, key.count, seed)
    }

    /// The slot (a ``SlotTable`` reference) holding `key`, or nil.
    @inline(__always)
    func find(_ key: UnsafeRawBufferPointer, hash h: UInt64) -> Int? {
        slotTable.find(fingerprint: h >> 32) { n in
            let e = stored[n]
            return Int(e.keyLength) == key.count && keys.holds(key, for: e)
        }
    }

    @inline(__always)
    func entryNumber(slot: Int) -> Int { slotTable.entryNumber(slot) }

    /// The number (`0 ..< count`) of the entry for `key`, or nil.
    func entryNumber(forKey key: UnsafeRawBufferPointer) -> Int? {
        find(key, hash: hash(key)).map { entryNumber(slot: $0) }
    }

    /// The entry for `key` (its UTF-8 bytes), or nil.
    @inline(__always)
    func entry(forKey key: UnsafeRawBufferPointer) -> IndexEntry? {
        guard let slot = find(key, hash: hash(key)) else { return nil }
        return entry(at: entryNumber(slot: slot))
    }

    /// Runs `body` on the entry for `key` and stores what it leaves; nil when absent. `body`
    /// must not change the key's length or offset.
    @inline(__always)
    mutating func withEntry<R>(forKey key: UnsafeRawBufferPointer, _ body: (inout IndexEntry) -> R) -> R? {
        guard let slot = find(key, hash: hash(key)) else { return nil }
        let n = entryNumber(slot: slot)
        var e = entry(at: n)
        let result = body(&e)
        set(e, at: n)
        return result
    }

    // MARK: Changes

    /// Sets the entry for `key`, returning the one it replaced.
    @discardableResult
    mutating func updateValue(_ entry: IndexEntry, forKey key: UnsafeRawBufferPointer) -> IndexEntry? {
        let h = hash(key)
        if let slot = find(key, hash: h) {
            let n = entryNumber(slot: slot)
            let old = self.entry(at: n)
            var e = entry
            e.keyOffset = old.keyOffset
            e.keyLength = old.keyLength
            e.keyArena = old.keyArena
            set(e, at: n)
            if keys.isMigrating { keys.migrate(&stored) }
            return old
        }
        var e = entry
        e.keyLength = UInt16(key.count)
        let place = keys.add(key)
        e.keyOffset = place.offset
        e.keyArena = UInt8(place.arena)
        append(e)
        slotTable.insert(fingerprint: h >> 32, entryNumber: count - 1, count: count)
        if keys.isMigrating { keys.migrate(&stored) }
        return nil
    }

    /// The size of slot table to make ahead for the next growth, and a prepared table given back
    /// for the caller to free outside its lock (``SlotTable/preparationTick(count:)``).
    mutating func slotTablePreparationTick() -> (wanted: Int?, released: [UInt64]?) { slotTable.preparationTick(count: count) }

    /// Keeps a zeroed slot table made ahead for the next growth.
    mutating func adoptPreparedSlotTable(_ table: [UInt64]) { slotTable.adoptPrepared(table) }

    /// Removes `key`, returning its entry.
    @discardableResult
    mutating func removeValue(forKey key: UnsafeRawBufferPointer) -> IndexEntry? {
        guard let slot = find(key, hash: hash(key)) else { return nil }
        return remove(slot: slot)
    }

    /// Removes the entry numbered `n` (`0 ..< count`), returning it. The last entry takes its
    /// number.
    @discardableResult
    mutating func removeEntry(at n: Int) -> IndexEntry {
        return remove(slot: slot(of: stored[n]))
    }

    /// Removes the entry of the occupied slot `slot`.
    private mutating func remove(slot: Int) -> IndexEntry {
        let n = entryNumber(slot: slot)
        let removed = entry(at: n)
        slotTable.remove(slot)
        keys.remove(stored[n], entryCount: count)
        let last = count - 1
        if n != last {
            // Move the last entry into the hole and repoint its slot.
            let moved = stored[last]
            slotTable.setEntryNumber(n, at: self.slot(of: moved))
            stored[n] = moved
            if !expiries.isEmpty { expiries[n] = expiries[last] }
        }
        stored.removeLast()
        if !expiries.isEmpty { expiries.removeLast() }
        if keys.isMigrating { keys.migrate(&stored) }
        return removed
    }

    /// Empties the index.
    mutating func removeAll() { self = KeyIndex() }

    /// Gives back what growing left unused: the table shrinks to 2/3 full when it is less than
    /// half full, and the chunked arrays keep no chunk past their last element's (so at most
    /// one chunk of each is unused: 512 KiB of entries, 128 KiB of expiries, 256 KiB of key
    /// bytes). For the end of an open.
    mutating func trimExcessCapacity() {
        slotTable.finishGrowth()
        if count * 2 < slotTable.size && Self.slotCount(for: count) < slotTable.size {
            slotTable.resize(to: Self.slotCount(for: count))
        }
        stored.releaseSpareChunks()
        expiries.releaseSpareChunks()
        keys.trimExcessCapacity(&stored)
    }

    /// The slot of the stored entry `e`, which is in the index.
    private func slot(of e: StoredIndexEntry) -> Int {
        keys.withKey(of: e) { k in find(k, hash: hash(k))! }
    }

    // MARK: Restoring

    /// The hash table as an ``IndexSnapshot`` saves it: each slot is 0 (empty) or the key's
    /// 32-bit fingerprint above its entry number plus one; `seed` keys the hash.
    var table: (slots: [UInt64], seed: UInt64) { (slotTable.flattened, seed) }

    /// An index restored from an ``IndexSnapshot``: `entries` and their `expiries` (empty when
    /// none has one), their keys one after the other in entry order in `keys` (each entry's
    /// key offset already set to the sum of the lengths before it), and the saved table. Nil unless the table has 16 to 2^32 - 1 slots, is no more
    /// than 3/4 full and its slots name every entry exactly once, and the keys fill `keys`
    /// exactly, and every entry is found by its own key (so a snapshot whose fingerprints or
    /// probe runs are not its keys' is refused, not half-trusted: an entry its key cannot reach
    /// could never be replaced or removed).
    init?(restoring entries: ChunkedArray<StoredIndexEntry>, expiries: ChunkedArray<Int64>, keys: ChunkedArray<UInt8>, slots: [UInt64], seed: UInt64) {
        let size = slots.count
        guard keys.count <= Int(UInt32.max), size >= Self.minimumSlots, size < 1 << 32, entries.count * 4 <= size * 3,
              expiries.isEmpty || expiries.count == entries.count else { return nil }
        var named = [Bool](repeating: false, count: entries.count)
        var occupied = 0
        for s in slots where s != 0 {
            let n = Int(s & 0xFFFF_FFFF) - 1
            guard n >= 0, n < entries.count, !named[n] else { return nil }
            named[n] = true
            occupied += 1
        }
        guard occupied == entries.count else { return nil }
        var offset = 0
        for n in entries.indices {
            let e = entries[n]
            guard Int(e.keyOffset) == offset else { return nil }
            offset += Int(e.keyLength)
        }
        guard offset == keys.count else { return nil }
        self.slotTable = SlotTable(restoring: slots)
        self.seed = seed
        self.stored = entries
        self.expiries = expiries
        self.keys = KeyStore(restoring: keys)
        guard findsEveryEntryByItsKey() else { return nil }
        trimExcessCapacity()
    }

    /// Bytes of the keys of the entries (the arena without removed keys' bytes).
    var liveKeyBytes: Int { keys.liveBytes }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
