import Synchronization

/// The keys whose live record went (replaced, removed, evicted, expired, found damaged, or
/// every record at once), in the order the store changed them: what a layer above that keeps
/// copies of records reads to drop its stale copies (the cache facade's memory layer). The store
/// writes it under its lock and never waits for a reader; a reader pulls what it has not seen,
/// by ``mark``, whenever it likes.
///
/// A change is kept until the reader has applied it and a window of ``retainedAfterApply``
/// newer ones came (so that a copy made from a read that began before a change can still be
/// checked against it), and at most ``capacity`` unapplied changes: past that the oldest are
/// dropped and a reader that needs them learns that it fell behind (it then drops every copy).
/// Thread-safe; the store takes its lock inside the store's, a reader never the other way round.
@usableFromInline
final class RecordChanges: Sendable {
    /// One change: the live record of `key` went, and with it every older one (`key` nil:
    /// every record at most `through`).
    @usableFromInline
    struct Change: Sendable {
        let key: String?
        /// The sequence number of the record that went (`UInt64.max` for every record).
        let through: UInt64
    }

    /// Changes kept beyond those not yet applied.
    static let retainedAfterApply = 1024
    /// Unapplied changes kept at most.
    static let capacity = 1 << 14

    private struct Journal {
        /// The mark of `changes[0]`.
        var base: UInt64 = 0
        var changes: [Change] = []
        var end: UInt64 { base + UInt64(changes.count) }
    }

    private let journal = Locked(Journal())
    /// The mark after the newest change (the count of changes ever recorded).
    @usableFromInline let published = Atomic<UInt64>(0)
    /// The mark up to which the reader applied the changes (``applyUnapplied(_:)``).
    @usableFromInline let applied = Atomic<UInt64>(0)

    init() {}

    /// The mark after the newest change: one acquiring load. A copy made from a read that
    /// begins after this call can be checked against every later change
    /// (``withChanges(since:_:)``).
    var mark: UInt64 { published.load(ordering: .acquiring) }

    /// Whether changes were recorded that ``applyUnapplied(_:)`` has not handed over: two
    /// loads, for the hit path. A change recorded before a store call returned is seen by a
    /// check that starts after it.
    @inlinable @inline(__always)
    var hasUnapplied: Bool { published.load(ordering: .acquiring) != applied.load(ordering: .relaxed) }

    /// Records that the live record of `key` (UTF-8 bytes) went; its sequence was `sequence`.
    /// Under the store's lock.
    func recordGone(_ key: UnsafeRawBufferPointer, through sequence: UInt64) {
        append(Change(key: String(decoding: key, as: UTF8.self), through: sequence))
    }

    /// Records that every record went (the store was emptied or closed).
    func recordAllGone() {
        append(Change(key: nil, through: .max))
    }

    private func append(_ change: Change) {
        journal.withLock { j in
            j.changes.append(change)
            if j.changes.count > Self.capacity + Self.retainedAfterApply {
                let dropped = j.changes.count - Self.capacity
                j.changes.removeFirst(dropped)
                j.base += UInt64(dropped)
            }
            published.store(j.end, ordering: .releasing)
        }
    }

    /// Hands `body` the changes not applied yet (nil when some of them were dropped: the
    /// reader fell behind) under the journal's lock, then counts them as applied. `body` must
    /// not call the store. Two readers that overlap are serialised.
    @usableFromInline
    func applyUnapplied(_ body: (ArraySlice<Change>?) -> Void) {
        journal.withLock { j in
            let from = applied.load(ordering: .relaxed)
            body(from < j.base ? nil : j.changes[Int(from - j.base)...])
            applied.store(j.end, ordering: .releasing)
            let keep = Self.retainedAfterApply
            if j.changes.count > 2 * keep {
                let dropped = j.changes.count - keep
                j.changes.removeFirst(dropped)
                j.base += UInt64(dropped)
            }
        }
    }

    /// Hands `body` the changes recorded since `mark` (nil when some of them were dropped)
    /// under the journal's lock, so that no change is recorded or applied while it runs; `body`
    /// must not call the store.
    func withChanges<R>(since mark: UInt64, _ body: (ArraySlice<Change>?) -> R) -> R {
        journal.withLock { j in body(mark < j.base ? nil : j.changes[Int(min(mark, j.end) - j.base)...]) }
    }
}
