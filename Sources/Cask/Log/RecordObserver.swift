/// A layer above the store that keeps copies of its live records and answers some reads
/// itself: the cache facade's memory layer. Both calls run under the store's lock; they must
/// not call back into the store.
///
/// The store calls ``recordGone`` whenever the live record of a key is replaced or dropped
/// (a put, a removal, an eviction, an expiry, damage; nil: every record, at `removeAll` and
/// `close`), so that no copy outlives its record. And before anything under its lock reads
/// access times (a read, an eviction, a trim, metadata, the snapshot), it applies the uses
/// ``takeUses`` reports, so that LRU order and the age limit count the reads answered above
/// exactly.
struct RecordObserver: Sendable {
    /// The live record of the key (UTF-8 bytes) is gone; nil: every record.
    let recordGone: @Sendable (UnsafeRawBufferPointer?) -> Void
    /// Whether ``takeUses`` may have something (cheap: checked on every lock).
    let mayHaveUses: @Sendable () -> Bool
    /// Reads answered above since the last call: (key, milliseconds of the store's clock).
    /// Each is of a record that was live then.
    let takeUses: @Sendable () -> [(String, Int64)]
}

extension StoreState {
    /// Applies the uses the observer reports: each live entry's access time becomes the latest
    /// of its own and the reported one (a record replaced since is newer than the use).
    mutating func applyObservedUses() {
        guard let observer, observer.mayHaveUses() else { return }
        for (key, time) in observer.takeUses() {
            withUTF8(key) { bytes in
                _ = index.withEntry(forKey: bytes) { e in if time > e.accessTime { e.accessTime = time } }
            }
        }
    }
}
