/// The store's two background threads: the flush thread (flush deadline, interval syncs and
/// sealing a nearly full segment) and the compaction thread's arming.
extension DiskStore {
    /// How many times the flush and compaction threads have run (for tests of idle behaviour).
    package var backgroundRuns: (flush: Int, compaction: Int) {
        (ticker?.runs.load(ordering: .relaxed) ?? 0, compactor?.runs.load(ordering: .relaxed) ?? 0)
    }

    /// Whether records wait for the flush deadline (or, with interval durability, for a sync).
    var hasUnwrittenRecords: Bool {
        state.withLock { s in
            guard !s.isClosed else { return false }
            if case .interval = options.durability { return s.writer.size > s.writer.syncedSize }
            return s.writer.size > s.writer.flushedSize
        }
    }

    /// Whether the compaction thread must look at its next interval: some item can expire or
    /// age out, or a sealed segment gained dead bytes since it last looked.
    var needsCompactionCheck: Bool {
        state.withLock { s in !s.isClosed && (s.expiringCount > 0 || s.ageLimitMilliseconds > 0 || s.sealedGarbageGrew) }
    }

    /// A change that may leave records in the buffer, an expiring item or dead bytes: makes sure
    /// the background threads run within their interval. One relaxed load each when they are
    /// already armed. `compaction` false (a plain put left nothing for the compaction thread)
    /// leaves that thread asleep: arming it would wake it only to find nothing, once per write.
    @inline(__always)
    func armBackgroundWork(compaction: Bool = true) {
        ticker?.arm()
        if compaction { compactor?.arm() }
    }

    /// Called by the ticker: hands an old write buffer to the OS and runs interval syncs.
    /// Returns false once the store is closed.
    func backgroundTick() -> Bool {
        let (isOpen, seal) = state.withLock { s -> (Bool, Bool) in
            guard !s.isClosed else { return (false, false) }
            do throws(CaskError) {
                if case .interval = options.durability { try s.syncActive() } else { try s.flush() }
            } catch {
                s.stats.backgroundFailures += 1
                options.logger.warning("background flush failed: \(error)")
            }
            return (true, s.rolloverRequested)
        }
        if seal { sealInBackground() }
        return isOpen
    }

    /// Seals the nearly full active segment off the write path (format-spec.md, "Rollover"):
    /// its bytes are synced outside the lock first, so that the rollover, in one slice of the
    /// lock, syncs only what came since and creates the next segment. A failure is counted and
    /// logged; the write that fills the segment then seals it itself.
    private func sealInBackground() {
        do throws(CaskError) {
            try state.syncActiveOutsideLock()
            let deferred = try state.withSlice { s throws(CaskError) -> StoreState.Deferred in
                guard !s.isClosed, s.rolloverRequested else { return StoreState.Deferred() }
                try s.rollover()
                return s.takeDeferred()
            }
            if !deferred.isEmpty { finish(deferred) }
        } catch {
            state.withLock { $0.stats.backgroundFailures += 1 }
            options.logger.warning("background rollover failed: \(error)")
        }
    }
}
