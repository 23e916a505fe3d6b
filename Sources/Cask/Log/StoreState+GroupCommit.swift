/// Group commit for `Durability.everyWrite` (format-spec.md, "Durability").
///
/// A durable write appends its record under the store's lock but does not install it in the
/// index: it waits in `awaitingSync` with a ticket. One writer at a time (the committer, holding
/// `DiskStore.commitGate`) flushes the buffer, releases the store's lock, `fdatasync`s the
/// active segment, and takes the lock again to install every waiting write the sync covered, in
/// append order. Writers that arrive during a sync are covered by the next one, so two threads
/// share one fsync instead of queueing behind each other's.
///
/// Readers never see a durable write before it is durable. A failed sync (or flush) fails every
/// waiting write in the active segment and cuts the file back to what was synced; a failed
/// fsync is never retried and trusted (the segment is abandoned at the next write).
struct PendingWrite: Sendable {
    let ticket: UInt64
    let key: [UInt8]
    let entry: IndexEntry
    /// For a removal of a live item: the key, for the `.removed` event.
    let removedKey: String?
    /// False for a record with no index entry of its own (a removal record): settled, not installed.
    var installs = true
}

extension StoreState {
    /// Queues an appended durable record; returns its ticket.
    mutating func awaitSync(_ entry: IndexEntry, key: UnsafeRawBufferPointer, removedKey: String? = nil, installs: Bool = true) -> UInt64 {
        nextTicket += 1
        awaitingSync.append(PendingWrite(ticket: nextTicket, key: Array(key), entry: entry, removedKey: removedKey, installs: installs))
        return nextTicket
    }

    /// Segments holding records that wait for a sync: compaction leaves them alone (their
    /// records are not in the index yet and would look dead).
    var segmentsAwaitingSync: Set<UInt32> { Set(awaitingSync.map(\.entry.segment)) }

    /// Installs the waiting writes that are durable now, in order: those in sealed segments (a
    /// segment is synced before it is sealed) and those in the active one below `syncedSize`.
    mutating func installDurable(now: Int64) {
        var n = 0, installed = 0
        for p in awaitingSync {
            guard p.entry.segment != writer.id || Int64(p.entry.offset) + Int64(p.entry.recordSize) <= writer.syncedSize else { break }
            if p.installs {
                p.key.withUnsafeBytes { _ = install(p.entry, forKey: $0) }
                installed += 1
            }
            if let key = p.removedKey, options.eventHandler != nil { pendingEvents.append(.removed(key: key)) }
            committedTicket = p.ticket
            n += 1
        }
        guard n > 0 else { return }
        awaitingSync.removeFirst(n)
        // A removal record alone evicts nothing: it is about to remove items itself.
        if installed > 0 { enforceLimits(now: now) }
    }

    /// A flush or sync of the active segment failed: what it covered cannot be trusted. Installs
    /// what was durable before, fails every other waiting write with `error`, and cuts the
    /// active segment back to its synced size.
    mutating func failUnsynced(_ error: CaskError, now: Int64) {
        installDurable(now: now)
        guard let last = awaitingSync.last else { return }
        for p in awaitingSync { commitFailures[p.ticket] = error }
        committedTicket = last.ticket
        awaitingSync.removeAll()
        if writer.size > writer.syncedSize { undo(to: writer.syncedSize) }
        writer.needsRollover = true
    }

    /// `removeAll` cleared the store durably: the writes still waiting were ordered before it,
    /// so they succeed with no effect left.
    mutating func settleAwaitingAsCleared() {
        guard let last = awaitingSync.last else { return }
        committedTicket = last.ticket
        awaitingSync.removeAll()
    }
}
