/// One durable write appended to the active segment and waiting for the sync that makes it
/// durable (``CommitQueue``).
struct PendingWrite: Sendable {
    let ticket: UInt64
    let key: [UInt8]
    let entry: IndexEntry
    /// For a removal of a live item: the key, for the `.removed` event.
    let removedKey: String?
    /// What the record does once it is durable.
    let effect: RecordWrite.Effect
}

/// The group commit's queue for `Durability.everyWrite` (format-spec.md, "Writing protocol"):
/// durable writes appended but not yet covered by a sync, in append order, each with a ticket,
/// and the outcome of the settled ones. A value kept in ``StoreState``; changed only under the
/// store's lock, through these methods.
///
/// Invariants (checked by ``checkInvariants()`` in debug builds and tests): tickets are issued
/// from 1 up and wait in ascending order; every waiting ticket is above ``committedTicket``,
/// which is at most the last ticket issued; a failure is kept only for a settled ticket.
struct CommitQueue: Sendable {
    /// Waiting writes, oldest first.
    private(set) var waiting: [PendingWrite] = []
    /// The last ticket issued (0: none yet).
    private(set) var lastTicket: UInt64 = 0
    /// Every ticket up to this one is settled (installed or failed).
    private(set) var committedTicket: UInt64 = 0
    /// Failed tickets, until their writer collects the error.
    private var failures: [UInt64: CaskError] = [:]

    var isEmpty: Bool { waiting.isEmpty }
    var count: Int { waiting.count }

    /// Queues an appended durable record; returns its ticket.
    mutating func enqueue(_ entry: IndexEntry, key: UnsafeRawBufferPointer, removedKey: String?, effect: RecordWrite.Effect) -> UInt64 {
        lastTicket += 1
        waiting.append(PendingWrite(ticket: lastTicket, key: Array(key), entry: entry, removedKey: removedKey, effect: effect))
        return lastTicket
    }

    /// Whether write `ticket` is settled.
    func isSettled(_ ticket: UInt64) -> Bool { committedTicket >= ticket }

    /// The error write `ticket` failed with, handed over once (nil: it succeeded).
    mutating func takeFailure(of ticket: UInt64) -> CaskError? { failures.removeValue(forKey: ticket) }

    /// The newest waiting value or tombstone of `key`, if any (a removal record's key is a
    /// prefix or tag, not a key).
    func newestWrite(ofKey key: UnsafeRawBufferPointer) -> PendingWrite? {
        waiting.last { $0.effect == .install && $0.key.elementsEqual(key) }
    }

    /// Whether a write of `key` waits.
    func hasWrite(ofKey key: UnsafeRawBufferPointer) -> Bool {
        !waiting.isEmpty && waiting.contains { $0.key.elementsEqual(key) }
    }

    /// Segments holding waiting records: compaction leaves them alone (their records are not in
    /// the index yet and would look dead).
    var segments: Set<UInt32> { Set(waiting.map(\.entry.segment)) }

    /// Takes the waiting writes that are durable now, in order, and settles them: those in
    /// sealed segments (a segment is synced before it is sealed) and those in segment `active`
    /// that end at or below `syncedSize`.
    mutating func takeDurable(active: UInt32, syncedSize: Int64) -> ArraySlice<PendingWrite> {
        let n = waiting.firstIndex { $0.entry.segment == active && Int64($0.entry.offset) + Int64($0.entry.recordSize) > syncedSize } ?? waiting.count
        guard n > 0 else { return [] }
        let durable = waiting[..<n]
        committedTicket = durable.last!.ticket
        waiting.removeFirst(n)
        return durable
    }

    /// Settles every waiting write as failed with `error`.
    mutating func failAll(_ error: CaskError) {
        guard let last = waiting.last else { return }
        for p in waiting { failures[p.ticket] = error }
        committedTicket = last.ticket
        waiting.removeAll()
    }

    /// Settles every waiting write as done with no effect (a `removeAll` ordered after them).
    mutating func settleAll() {
        guard let last = waiting.last else { return }
        committedTicket = last.ticket
        waiting.removeAll()
    }

    /// Asserts the invariants above (debug builds).
    func checkInvariants() {
        assert(committedTicket <= lastTicket, "committed ticket \(committedTicket) past the last issued \(lastTicket)")
        assert(waiting.first.map { $0.ticket > committedTicket } ?? true, "a waiting write is already settled")
        assert(zip(waiting, waiting.dropFirst()).allSatisfy { $0.ticket < $1.ticket }, "waiting writes out of ticket order")
        assert(failures.keys.allSatisfy { $0 <= committedTicket }, "a failure kept for an unsettled ticket")
    }
}
