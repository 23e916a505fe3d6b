import Foundation

/// The group commit of `.everyWrite` stores (format-spec.md, "Writing protocol"): one writer syncs for
/// every record appended before its sync.
extension DiskStore {
    /// Waits until the durable write `ticket` is settled, running the group commit's sync itself
    /// when no other writer has covered it (StoreState+GroupCommit.swift). Throws the write's
    /// error when its sync (or flush) failed; the key then keeps its previous value.
    func commit(_ ticket: UInt64) throws(CaskError) {
        enum Step { case settled, sync(CaskFileHandle, UInt32, Int64) }
        let fs = options.fileSystem
        // A follower whose write a leader's sync covered returns here without taking the lead.
        let role = commitGate.lead(unlessSettled: { state.withLock { $0.commits.isSettled(ticket) } })
        if role.waited { lastConcurrentDurableWrite.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed) }
        guard role.isLeader else {
            try throwFailure(of: ticket)
            return
        }
        let deferred = { () -> StoreState.Deferred in
            defer { commitGate.finish() }
            gatherConcurrentWriters()
            syncPredecessorOutsideLock()
            let step = state.withLock { s -> Step in
                if s.commits.isSettled(ticket) { return .settled }
                let now = options.clock.now
                do throws(CaskError) { try s.flush() } catch {
                    s.failUnsynced(error, now: now)
                    return .settled
                }
                if s.writer.syncedSize >= s.writer.flushedSize {
                    s.installDurable(now: now)   // another sync (compaction, sync(), rollover) covered it
                    return .settled
                }
                s.stats.segmentSyncs += 1
                return .sync(s.active.handle, s.writer.id, s.writer.flushedSize)
            }
            guard case .sync(let handle, let id, let target) = step else { return state.withLock { $0.takeDeferred() } }
            var failure: CaskError?
            do throws(CaskError) { try fs.sync(handle) } catch { failure = error }
            return state.withLock { s -> StoreState.Deferred in
                let now = options.clock.now
                if let failure {
                    if s.writer.id == id {
                        s.failUnsynced(failure, now: now)
                    } else {
                        // The segment was sealed meanwhile: its rollover synced it (or would have
                        // failed these writes itself), so they are durable.
                        s.installDurable(now: now)
                    }
                } else {
                    if s.writer.id == id { s.tail.markSynced(through: target) }
                    s.installDurable(now: now)
                }
                return s.takeDeferred()
            }
        }()
        if !deferred.isEmpty { finish(deferred) }
        try throwFailure(of: ticket)
    }

    /// Throws the error the group commit recorded for the write `ticket`, if any (and forgets it).
    private func throwFailure(of ticket: UInt64) throws(CaskError) {
        if let error = state.withLock({ $0.commits.takeFailure(of: ticket) }) { throw error }
    }

    /// Behind a shut rollover gate, syncs the sealed segment before the flush takes the lock
    /// (the flush would sync it under the lock: every put would wait for that `fdatasync`).
    private func syncPredecessorOutsideLock() {
        guard let gate = state.withLock({ $0.writer.predecessor }) else { return }
        do throws(CaskError) { try gate.sync() } catch {
            // The failure is kept by the gate: the flush below meets it and fails the writes.
        }
    }

    /// When a durable writer found another one syncing in the last 2 ms, waits up to 50 µs (a
    /// fraction of an fsync) for one more record, so that the coming sync covers it too (like
    /// PostgreSQL's `commit_delay`): the writers just released by the last sync are usually
    /// about to append their next one. A single writer never waits.
    private func gatherConcurrentWriters() {
        let start = DispatchTime.now().uptimeNanoseconds
        guard start &- lastConcurrentDurableWrite.load(ordering: .relaxed) < 2_000_000 else { return }
        let commitsQueued = { self.state.withLock { $0.commits.count } }
        let initial = commitsQueued()
        while DispatchTime.now().uptimeNanoseconds - start < 50_000 {
            sched_yield()
            if commitsQueued() > initial { return }
        }
    }
}
