import CaskFormat

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension KeyIndex {
    // MARK: Iteration

    @inline(__always)
    private func key(_ e: StoredIndexEntry, in arena: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: arena[Int(e.keyOffset)..<(Int(e.keyOffset) + Int(e.keyLength))])
    }

    /// The key of an entry from ``entries``.
    func key(of entry: IndexEntry) -> String {
        keys.withUnsafeBytes { arena in
            String(decoding: UnsafeRawBufferPointer(rebasing: arena[Int(entry.keyOffset)..<(Int(entry.keyOffset) + Int(entry.keyLength))]), as: UTF8.self)
        }
    }

    /// Calls `body` with every key (as bytes) and entry, in no particular order.
    func forEach(_ body: (UnsafeRawBufferPointer, IndexEntry) -> Void) {
        keys.withUnsafeBytes { arena in
            for n in stored.indices { body(key(stored[n], in: arena), entry(at: n)) }
        }
    }

    /// Calls `body` with the key and entry of each entry numbered in `range` (clamped to
    /// ``count``): for walks of the index in slices of the store's lock.
    func forEach(in range: Range<Int>, _ body: (UnsafeRawBufferPointer, IndexEntry) -> Void) {
        let range = range.clamped(to: stored.indices)
        keys.withUnsafeBytes { arena in
            for n in range { body(key(stored[n], in: arena), entry(at: n)) }
        }
    }

    /// The numbers in `range` (clamped to ``count``) of the entries whose key and stored entry
    /// `include` accepts, in ascending order.
    func entryNumbers(in range: Range<Int>, where include: (UnsafeRawBufferPointer, UInt64) -> Bool) -> [Int] {
        let range = range.clamped(to: stored.indices)
        var found: [Int] = []
        keys.withUnsafeBytes { arena in
            stored.withUnsafeBufferPointer { entries in
                for n in range where include(key(entries[n], in: arena), entries[n].sequence) { found.append(n) }
            }
        }
        return found
    }

    /// Calls `body` with the key and entry numbered `n` (`0 ..< count`).
    func withKey<R>(at n: Int, _ body: (UnsafeRawBufferPointer, IndexEntry) -> R) -> R {
        keys.withUnsafeBytes { arena in body(key(stored[n], in: arena), entry(at: n)) }
    }

    /// Calls `body` with every key (as bytes) and entry in ``entries`` order, stopping at the
    /// first error.
    func forEachEntry<E: Error>(_ body: (UnsafeRawBufferPointer, IndexEntry) throws(E) -> Void) throws(E) {
        let result: Result<Void, E> = keys.withUnsafeBytes { arena in
            for n in stored.indices {
                do throws(E) { try body(key(stored[n], in: arena), entry(at: n)) } catch { return .failure(error) }
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
        order.reserveCapacity(count)
        for n in stored.indices where include(entry(at: n)) { order.append(Int32(n)) }
        keys.withUnsafeBytes { arena in
            stored.withUnsafeBufferPointer { entries in
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

/// The index by `String` keys (their UTF-8 bytes).
extension KeyIndex {
    /// The entry for `key`, or nil.
    func entry(forKey key: String) -> IndexEntry? {
        withUTF8(key) { entry(forKey: $0) }
    }

    /// Sets the entry for `key`, returning the one it replaced.
    @discardableResult
    mutating func updateValue(_ entry: IndexEntry, forKey key: String) -> IndexEntry? {
        withUTF8(key) { updateValue(entry, forKey: $0) }
    }

    /// Removes `key`, returning its entry.
    @discardableResult
    mutating func removeValue(forKey key: String) -> IndexEntry? {
        withUTF8(key) { removeValue(forKey: $0) }
    }
}
