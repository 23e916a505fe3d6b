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

    /// Runs `body` with the key of entry `n` and the entry.
    @inline(__always)
    private func withKeyAndEntry<R>(_ n: Int, _ body: (UnsafeRawBufferPointer, IndexEntry) throws -> R) rethrows -> R {
        let e = stored[n]
        return try keys.withKey(of: e) { try body($0, entry(at: n)) }
    }

    /// The key of an entry from ``entries``.
    func key(of entry: IndexEntry) -> String {
        keys.withKey(of: entry) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with every key (as bytes) and entry, in no particular order.
    func forEach(_ body: (UnsafeRawBufferPointer, IndexEntry) -> Void) {
        for n in stored.indices { withKeyAndEntry(n, body) }
    }

    /// Calls `body` with the key and entry of each entry numbered in `range` (clamped to
    /// ``count``): for walks of the index in slices of the store's lock.
    func forEach(in range: Range<Int>, _ body: (UnsafeRawBufferPointer, IndexEntry) -> Void) {
        for n in range.clamped(to: stored.indices) { withKeyAndEntry(n, body) }
    }

    /// The numbers in `range` (clamped to ``count``) of the entries whose key and stored entry
    /// `include` accepts, in ascending order.
    func entryNumbers(in range: Range<Int>, where include: (UnsafeRawBufferPointer, UInt64) -> Bool) -> [Int] {
        var found: [Int] = []
        for n in range.clamped(to: stored.indices) {
            let e = stored[n]
            if keys.withKey(of: e, { include($0, e.sequence) }) { found.append(n) }
        }
        return found
    }

    /// Calls `body` with the key and entry numbered `n` (`0 ..< count`).
    func withKey<R>(at n: Int, _ body: (UnsafeRawBufferPointer, IndexEntry) -> R) -> R {
        withKeyAndEntry(n, body)
    }

    /// Calls `body` with every key (as bytes) and entry in ``entries`` order, stopping at the
    /// first error.
    func forEachEntry<E: Error>(_ body: (UnsafeRawBufferPointer, IndexEntry) throws(E) -> Void) throws(E) {
        for n in stored.indices {
            let result: Result<Void, E> = withKeyAndEntry(n) { key, e in
                do throws(E) { try body(key, e) } catch { return .failure(error) }
                return .success(())
            }
            try result.get()
        }
    }

    /// The numbers of the entries (positions in ``entries``) that `include` accepts, in
    /// ascending order of their keys' bytes (`memcmp`, then length): 4 bytes per entry, no key
    /// copied.
    func entryNumbersSortedByKey(where include: (IndexEntry) -> Bool) -> [Int32] {
        var order: [Int32] = []
        order.reserveCapacity(count)
        for n in stored.indices where include(entry(at: n)) { order.append(Int32(n)) }
        order.sort { a, b in
            let x = stored[Int(a)], y = stored[Int(b)]
            let common = min(Int(x.keyLength), Int(y.keyLength))
            let c = common == 0 ? 0 : keys.withKey(of: x) { p in
                keys.withKey(of: y) { q in memcmp(p.baseAddress!, q.baseAddress!, common) }
            }
            return c != 0 ? c < 0 : x.keyLength < y.keyLength
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
