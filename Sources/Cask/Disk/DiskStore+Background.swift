import Dispatch
import CaskFormat

/// The active segment as the compaction thread saw it at one check: if it is the same, with the
/// same size, a check interval later, nothing was written meanwhile.
struct ActiveSegmentMark: Sendable, Equatable {
    var segment: UInt32
    var size: Int64
    /// When it was seen (uptime nanoseconds).
    var seen: UInt64
}

/// The background threads' work: the flush deadline, interval syncs, and the compaction
/// thread's look at the active segment.
extension DiskStore {
    /// How many times the flush (and interval sync) and compaction threads have run (for tests
    /// of idle behaviour).
    package var backgroundRuns: (flush: Int, compaction: Int) {
        ((ticker?.runs.load(ordering: .relaxed) ?? 0) + (syncer?.runs.load(ordering: .relaxed) ?? 0),
         compactor?.runs.load(ordering: .relaxed) ?? 0)
    }

    /// The one place that starts background work: after a change that may leave records in
    /// the buffer, makes sure the flush and sync threads run within their interval (one relaxed
    /// load each when they are already armed), and starts each job of `jobs` on its thread.
    /// Without ``BackgroundJobs/lookForCompaction`` (a plain put left nothing for the
    /// compaction thread) that thread stays asleep: arming it would wake it only to find
    /// nothing, once per write. ``BackgroundJobs/compactOnWritePath`` is the caller's own
    /// (``finish(_:)``), not a thread's.
    @inline(__always)
    func schedule(_ jobs: BackgroundJobs) {
        ticker?.arm()
        syncer?.arm()
        if jobs.contains(.lookForCompaction) { compactor?.arm() }
        if jobs.contains(.seal) { ticker?.wake() }
        if jobs.contains(.writeBuffer) { bufferWriter?.wake() }
        if jobs.contains(.compact) && !jobs.contains(.compactOnWritePath) { compactor?.wake() }
    }

    /// Whether records wait in the write buffer for the flush deadline.
    var hasUnflushedRecords: Bool { state.gauges().hasUnflushedRecords }

    /// Whether records wait for an interval sync (written or buffered, not yet `fdatasync`ed).
    var hasUnsyncedRecords: Bool { state.gauges().hasUnsyncedRecords }

    /// Whether the compaction thread must look at its next interval: some item can expire or
    /// age out, a sealed segment gained dead bytes since it last looked, or the active segment
    /// holds enough dead bytes to be sealed once the store goes idle
    /// (``StoreState/activeIsWorthSealing``), or a segment is sealed under a previous key
    /// (rotation: compaction re-seals it). O(segments) for the last.
    var needsCompactionCheck: Bool {
        state.withLock { s in
            !s.isClosed && (s.expiringCount > 0 || s.ageLimitMilliseconds > 0 || s.work.sealedGarbageGrew || s.activeIsWorthSealing
                || s.usage.contains { s.options.needsReseal(segment: $0.key, keyID: $0.value.keyID) })
        }
    }

    /// Called by the flush thread: hands an old write buffer to the OS (never syncs: that is the
    /// sync thread's, at most once per interval), prepares the next segment and the index's next
    /// slot table, and seals the active segment when it is nearly full. Arms the compaction
    /// thread when the active segment became worth sealing. Returns false once the store is closed.
    func backgroundTick() -> Bool {
        guard let step = runFlushStep(.flushThread) else { return false }
        if step.worthSealing { schedule(.lookForCompaction) }
        if step.canSeal { sealInBackground() }
        return true
    }

    /// Called by the buffer writer thread when a put handed off a full buffer: writes it outside
    /// the lock, and makes a writeback request a put noted
    /// (``SegmentWriter/startWritebackOfFlushedBytes()``). Returns false once the store is closed.
    func writeHandedOffBuffer() -> Bool {
        runFlushStep(.bufferWriter) != nil
    }

    /// One ``FlushStep``: planned under the lock, its I/O done without it, applied under the lock;
    /// failures logged after. Nil once the store is closed.
    private func runFlushStep(_ role: FlushStep.Role) -> FlushStep? {
        guard var step = state.withLock({ $0.planFlushStep(role) }) else { return nil }
        if let error = step.flushFailure { options.logger.warning("background flush failed: \(error)") }
        step.perform(directory: directory, options: options)
        let result = state.withLock { $0.applyFlushStep(step) }
        FlushStep.requestWriteback(result.writeback)
        if let late = result.lateSegment {
            // Harmless `try?`: a segment file with only a header, which the next open removes.
            try? options.fileSystem.remove(late.path)   // its descriptor closes with `late`
        }
        for (what, error) in result.failures { options.logger.warning("\(what): \(error)") }
        return step
    }

    /// Seals the nearly full active segment off the write path (format-spec.md, "Rollover"),
    /// with no `fdatasync` under the lock or on this thread: the flush step before it created
    /// the next segment outside the lock (unless it was already); a step of its own writes the
    /// buffered records (what the switch writes under the lock is then short); in one slice of
    /// the lock the next segment becomes active behind a shut gate. The hint
    /// writer then syncs the sealed segment before writing its hint, and the next tick opens the
    /// gate (and, once the new segment is half full, prepares the one after it). Where the gate
    /// cannot be used (writes wait for a sync), the slice seals with a sync as
    /// ``StoreState/rollover()`` does. A failure is counted and logged; the write that fills the
    /// segment then seals it itself. A failed sync of the sealed segment keeps the gate shut:
    /// every later write that needs it throws that error, until the store is reopened.
    private func sealInBackground() {
        guard runFlushStep(.sealing) != nil else { return }
        do throws(CaskError) {
            let deferred = try state.withSlice { s throws(CaskError) -> StoreState.Deferred in
                guard !s.isClosed, s.work.rolloverRequested else { return StoreState.Deferred() }
                if try s.rolloverBehindGate() == nil { try s.rollover() }
                return s.takeDeferred()
            }
            if !deferred.isEmpty { finish(deferred) }
        } catch {
            state.noteBackgroundFailure("background rollover failed", error)
        }
    }

    /// Called by the sync thread of `.interval(d)`, at least `d` after its previous run: flushes
    /// and `fdatasync`s the active segment when it holds unsynced records. Returns false once the
    /// store is closed.
    /// The `fdatasync` runs outside the store's lock (``StoreStateLock/syncActiveOutsideLock()``):
    /// a second of writes can take milliseconds to sync, and no put waits for it.
    func backgroundSync() -> Bool {
        let gauges = state.gauges()
        guard !gauges.isClosed else { return false }
        guard gauges.hasUnsyncedRecords else { return true }
        do throws(CaskError) { try state.syncActiveOutsideLock() } catch {
            if error == .closed { return false }
            state.noteBackgroundFailure("background sync failed", error)
        }
        return true
    }

    /// The compaction thread's look at the active segment: seals it (a rollover, format-spec.md
    /// "Rollover") when it is worth sealing (``StoreState/activeIsWorthSealing``) and nothing was
    /// written to it for at least one ``CompactionPolicy/checkInterval`` (the same segment with
    /// the same size as at the previous check), so that the compaction that follows can reclaim
    /// its dead bytes: a store whose items were all removed shrinks by itself. A store being
    /// written to is never sealed early by this. A failed rollover is counted and logged; the
    /// store goes on as before.
    func sealIdleActiveSegment() {
        let now = DispatchTime.now().uptimeNanoseconds
        let interval = UInt64(max(1, options.compaction.checkInterval.milliseconds)) * 1_000_000
        let deferred = state.withLock { s -> StoreState.Deferred? in
            guard !s.isClosed, s.activeIsWorthSealing else {
                lastActiveCheck.withLock { $0 = nil }
                return nil
            }
            let mark = ActiveSegmentMark(segment: s.writer.id, size: s.writer.size, seen: now)
            let previous = lastActiveCheck.withLock { last -> ActiveSegmentMark? in
                defer { if last?.segment != mark.segment || last?.size != mark.size { last = mark } }
                return last
            }
            guard let previous, previous.segment == mark.segment, previous.size == mark.size,
                  now - previous.seen >= interval else { return nil }
            do throws(CaskError) { try s.rollover() } catch {
                s.stats.backgroundFailures += 1
                options.logger.warning("could not seal the idle active segment: \(error)")
                return nil
            }
            lastActiveCheck.withLock { $0 = nil }
            var d = s.takeDeferred()
            d.jobs.remove(.compact)   // the compaction that follows is this thread's own
            return d
        }
        if let deferred, !deferred.isEmpty { finish(deferred) }
    }
}
