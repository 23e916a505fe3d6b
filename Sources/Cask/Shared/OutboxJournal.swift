import Foundation

/// The outbox's copy on disk: a ``DiskStore`` of its own in the cache's folder
/// (`shared-outbox/`), one record per change not yet acknowledged, keyed by its place in the
/// queue (20 decimal digits), written with the cache's durability before the cache call
/// returns and removed once the shared tier acknowledged it (format-spec.md, "Shared-tier
/// outbox"). At open, what it holds is queued again, in order. Thread-safe.
final class OutboxJournal: Sendable {
    static let folderName = "shared-outbox"
    private let store: DiskStore

    /// Opens (creating) the journal in `directory`, with the cache's disk options (durability,
    /// encryption, permissions, file system, clock) but no limits and no event handler.
    /// - Throws: ``CaskError/foreignFile(path:reason:)`` when `shared-outbox` is a symbolic
    ///   link or not a folder (it is never followed), and what opening a store throws.
    init(directory: String, options disk: StoreOptions) throws(CaskError) {
        let path = FileNames.join(directory, Self.folderName)
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
            throw .foreignFile(path: path, reason: "the shared tier's outbox must be a folder of the cache's own, not a symbolic link or a file; remove it (changes not yet sent in it are lost)")
        }
        var o = disk
        o.limits = StoreLimits()
        o.eventHandler = nil
        self.store = try DiskStore(directory: FileNames.join(directory, Self.folderName), options: o)
    }

    /// The changes it holds, in queue order, with their places. A record that is not a change
    /// (damage the store's checksums let through cannot happen; a foreign record can) is
    /// reported through `skipped` and removed.
    func pending(skipped: (String) -> Void) throws(CaskError) -> [(UInt64, SharedChange)] {
        var found: [(UInt64, SharedChange)] = []
        for key in store.keys() {
            guard key.utf8.count == 20, key.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let place = UInt64(key),
                  place < UInt64.max, let data = try store.value(forKey: key),
                  let change = SharedChangeCodec.decode(data) else {
                skipped(key)
                _ = try store.removeValue(forKey: key)
                continue
            }
            found.append((place, change))
        }
        return found.sorted { $0.0 < $1.0 }
    }

    /// Records `change` at `place`.
    func append(_ change: SharedChange, at place: UInt64) throws(CaskError) {
        try store.setValue(SharedChangeCodec.encode(change), forKey: Self.key(place))
    }

    /// Forgets the change at `place` (acknowledged).
    func remove(_ place: UInt64) throws(CaskError) { _ = try store.removeValue(forKey: Self.key(place)) }

    func close() throws(CaskError) { try store.close() }

    private static func key(_ place: UInt64) -> String {
        let digits = String(place)
        return String(repeating: "0", count: 20 - digits.count) + digits
    }
}
