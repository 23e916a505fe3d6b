import Foundation

/// The group commit of `.everyWrite` stores (format-spec.md, "Writing protocol"): one writer syncs for
/// every record appended before its sync.
extension DiskStore {
    /// Waits until the durable write `ticket` is settled, running the group commit's sync itself
    /// when no other writer has covered it (StoreState+GroupCommit.swift). Throws the write's
    /// error when its sync (or flush) failed; the key then keeps its previous value.
    func commit(_ ticket: UInt64) throws(CaskError) {
        // A follower whose write a leader's sync covered returns here without taking the lead.
        var outcome: Result<Void, CaskError>?
        let role = commitGate.lead(unlessSettled: {
            outcome = state.outcome(of: ticket)
            return outcome != nil
        })
        if role.waited { lastConcurrentDurableWrite.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed) }
        if role.isLeader {
            let deferred = { () -> StoreState.Deferred in
                defer { commitGate.finish() }
                gatherConcurrentWriters()
                return state.groupCommit(ticket)
            }()
            if !deferred.isEmpty { finish(deferred) }
            outcome = state.outcome(of: ticket)
        }
        if case .failure(let error) = outcome { throw error }
    }

    /// When a durable writer found another one syncing in the last 2 ms, waits up to 50 µs (a
    /// fraction of an fsync) for one more record, so that the coming sync covers it too (like
    /// PostgreSQL's `commit_delay`): the writers just released by the last sync are usually
    /// about to append their next one. A single writer never waits.
    private func gatherConcurrentWriters() {
        let start = DispatchTime.now().uptimeNanoseconds
        guard start &- lastConcurrentDurableWrite.load(ordering: .relaxed) < 2_000_000 else { return }
        let commitsQueued = { self.state.gauges().waitingCommits }
        let initial = commitsQueued()
        while DispatchTime.now().uptimeNanoseconds - start < 50_000 {
            sched_yield()
            if commitsQueued() > initial { return }
        }
    }
}
