/// Group commit for `Durability.everyWrite` (format-spec.md, "Durability").
///
/// A durable write appends its record under the store's lock but does not install it in the
/// index: it waits in `commits` (``CommitQueue``) with a ticket. One writer at a time (the committer, holding
/// `DiskStore.commitGate`) flushes the buffer, releases the store's lock, `fdatasync`s the
/// active segment, and takes the lock again to install every waiting write the sync covered, in
/// append order. Writers that arrive during a sync are covered by the next one, so two threads
/// share one fsync instead of queueing behind each other's.
///
/// Readers never see a durable write before it is durable. A failed sync (or flush) fails every
/// waiting write in the active segment and cuts the file back to what was synced; a failed
/// fsync is never retried and trusted (the segment is abandoned at the next write).
extension StoreState {
    /// Installs the waiting writes that are durable now, in order: those in sealed segments (a
    /// segment is synced before it is sealed) and those in the active one below `syncedSize`.
    mutating func installDurable(now: Int64) {
        let durable = commits.takeDurable(active: writer.id, syncedSize: writer.syncedSize)
        guard !durable.isEmpty else { return }
        var installed = 0
        for p in durable {
            p.key.withUnsafeBytes { putInEffect(p.entry, key: $0, effect: p.effect, removedKey: p.removedKey) }
            if p.effect == .install { installed += 1 }
        }
        commits.checkInvariants()
        // A removal record alone evicts nothing: it is about to remove items itself.
        if installed > 0 { enforceLimits(now: now) }
    }

    /// A flush or sync of the active segment failed: what it covered cannot be trusted. Installs
    /// what was durable before, fails every other waiting write with `error`, and cuts the
    /// active segment back to its synced size.
    mutating func failUnsynced(_ error: CaskError, now: Int64) {
        installDurable(now: now)
        guard !commits.isEmpty else { return }
        commits.failAll(error)
        if writer.size > writer.syncedSize { undo(to: writer.syncedSize) }
        tail.requireRollover()
    }

    /// `removeAll` cleared the store durably: the writes still waiting were ordered before it,
    /// so they succeed with no effect left.
    mutating func settleAwaitingAsCleared() { commits.settleAll() }
}
