/// What one `fdatasync` of the active segment outside the store's lock covers: the segment
/// and its flushed size when the sync was planned.
struct SyncTarget: @unchecked Sendable {   // SegmentFile's handle is only synced
    let file: SegmentFile
    let size: Int64

    /// Runs the `fdatasync` (outside the lock); the error, if it failed.
    func sync() -> CaskError? {
        do throws(CaskError) { try file.fileSystem.sync(file.handle) } catch { return error }
        return nil
    }
}

extension StoreState {
    /// Flushes the active segment and names what a sync outside the lock must cover; nil when
    /// everything flushed is synced already. Counts the sync (``StoreStatistics/segmentSyncs``).
    mutating func beginSync() throws(CaskError) -> SyncTarget? {
        try flush()
        guard writer.syncedSize < writer.flushedSize else { return nil }
        stats.segmentSyncs += 1
        return SyncTarget(file: active, size: writer.flushedSize)
    }

    /// Records the outcome of the sync of `target`. A segment sealed meanwhile was synced by its
    /// rollover (or failed its writes there): nothing changes for it. A failed sync fails what
    /// it covered, as ``syncActive()`` does.
    mutating func endSync(_ target: SyncTarget, failure: CaskError?) {
        guard writer.id == target.file.id else { return }
        if let failure { failUnsynced(failure, now: options.clock.now) } else { tail.markSynced(through: target.size) }
    }
}

/// Syncing the active segment without holding the store's lock over the `fdatasync`: the one
/// protocol of the group commit, ``DiskStore/sync()``, the interval sync and compaction
/// (format-spec.md, "One way to sync without the lock"). It plans under the lock
/// (behind a shut rollover gate, the sealed segment is synced first, also without the lock: the
/// flush would sync it under the lock and every put would wait for that `fdatasync`), syncs
/// without it, and records the outcome under it.
extension StoreStateLock {
    /// Flushes the active segment under the lock and `fdatasync`s it outside: records appended
    /// before this call are durable when it returns. A failed sync fails what it covered, as
    /// ``StoreState/syncActive()`` does. Used by ``DiskStore/sync()``, compaction (before its
    /// inputs can go) and the interval sync. Throws ``CaskError/closed`` on a closed store.
    func syncActiveOutsideLock() throws(CaskError) {
        guard let target = try planSync(for: nil) else { return }
        let failure = target.sync()
        _ = finishSync(target, failure: failure, for: nil)
        if let failure { throw failure }
    }

    /// The group commit's sync (DiskStore+Commit.swift), run by the one writer that leads it:
    /// unless `ticket` is settled, flushes and syncs outside the lock, then puts every durable
    /// write in effect in order and hands over what that left to do. A failed flush or sync
    /// fails the writes it covered (``outcome(of:)`` then gives the ticket's failure).
    func groupCommit(_ ticket: UInt64) -> StoreState.Deferred {
        let target: SyncTarget?
        do throws(CaskError) { target = try planSync(for: ticket) } catch { return StoreState.Deferred() }  // never thrown for a ticket
        return finishSync(target, failure: target?.sync(), for: ticket) ?? StoreState.Deferred()
    }

    /// What to sync: nil when nothing is (or, for a `ticket`, when it is settled). A failed
    /// flush throws; for a `ticket` it fails the waiting writes instead (``outcome(of:)``).
    private func planSync(for ticket: UInt64?) throws(CaskError) -> SyncTarget? {
        var gateSynced = false   // once: a failed gate stays shut, and the flush then meets its error
        while true {
            enum Plan { case gate(PredecessorSync), sync(SyncTarget?) }
            let plan = try withLock { s throws(CaskError) -> Plan in
                if let ticket, s.commits.isSettled(ticket) { return .sync(nil) }
                if s.isClosed { if ticket == nil { throw .closed } else { return .sync(nil) } }   // close synced and settled it
                if !gateSynced, let gate = s.writer.predecessor, !gate.isDurable { return .gate(gate) }
                do throws(CaskError) { return .sync(try s.beginSync()) } catch {
                    guard ticket != nil else { throw error }
                    s.failUnsynced(error, now: s.options.clock.now)
                    return .sync(nil)
                }
            }
            switch plan {
            case .sync(let target): return target
            case .gate(let gate):
                // A failure is kept by the gate: the flush meets it and fails the writes.
                do throws(CaskError) { try gate.sync() } catch {}
                gateSynced = true
            }
        }
    }

    /// Records the outcome of the sync of `target` (if one ran); for a `ticket`, puts every
    /// durable write in effect (also what another sync covered: compaction, `sync()`, a
    /// rollover) and hands over what that left to do.
    private func finishSync(_ target: SyncTarget?, failure: CaskError?, for ticket: UInt64?) -> StoreState.Deferred? {
        withLock { s in
            if let target { s.endSync(target, failure: failure) }
            guard ticket != nil else { return nil }
            s.installDurable(now: s.options.clock.now)
            return s.takeDeferred()
        }
    }

    /// Whether the durable write `ticket` is settled, and its failure if it failed (taken: asked
    /// once). Nil while it waits.
    func outcome(of ticket: UInt64) -> Result<Void, CaskError>? {
        withLock { s in
            guard s.commits.isSettled(ticket) else { return nil }
            return s.commits.takeFailure(of: ticket).map { .failure($0) } ?? .success(())
        }
    }
}
