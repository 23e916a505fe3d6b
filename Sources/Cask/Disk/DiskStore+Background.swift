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

/// A handoff the flush thread claimed, with the file it goes to.
struct ClaimedWrite: @unchecked Sendable {
    let handoff: Handoff
    let handle: CaskFileHandle
    let fs: any CaskFileSystem
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

    /// What of the active segment waits: records in the write buffer (`unflushed`, for the
    /// flush deadline) and records not yet `fdatasync`ed (`unsynced`, written or buffered, for
    /// an interval sync). Nil once the store is closed.
    var waitingRecords: (unflushed: Bool, unsynced: Bool)? {
        state.withLock { s in s.isClosed ? nil : (s.writer.size > s.writer.flushedSize, s.writer.size > s.writer.syncedSize) }
    }

    /// Whether records wait in the write buffer for the flush deadline.
    var hasUnflushedRecords: Bool { waitingRecords?.unflushed ?? false }

    /// Whether records wait for an interval sync (written or buffered, not yet `fdatasync`ed).
    var hasUnsyncedRecords: Bool { waitingRecords?.unsynced ?? false }

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
    /// sync thread's, at most once per interval). Arms the compaction thread when the active
    /// segment became worth sealing. Returns false once the store is closed.
    func backgroundTick() -> Bool {
        let (open, worthSealing, seal, claimed, due, prepare) = state.withLock { s -> (Bool, Bool, Bool, ClaimedWrite?, (file: SegmentFile, range: Range<Int64>)?, Bool) in
            guard !s.isClosed else { return (false, false, false, nil, nil, false) }
            // The hint writer syncs a sealed segment (``writeHints(_:)``): once it has, the gate
            // opens here, and what waited behind it is written below.
            s.tail.openGateIfDurable()
            // The buffer is handed off and written outside the lock. While the buffer writer is
            // writing an earlier handoff, nothing waits for it under the lock: the deadline
            // flush comes again. After a failed write, the flush here cuts it off and retries.
            var claimed: ClaimedWrite?
            if s.writer.isGated {
                // Nothing of the active segment is written before the sealed one is durable:
                // the flush thread opens the gate (``sealInBackground()``).
            } else if let h = s.tail.claimHandoff() {
                claimed = ClaimedWrite(handoff: h, handle: s.writer.file.handle, fs: s.writer.fs)
            } else if s.writer.handoff == nil || s.writer.needsTruncate {
                do throws(CaskError) { try s.flush() } catch {
                    s.stats.backgroundFailures += 1
                    options.logger.warning("background flush failed: \(error)")
                }
            }
            return (true, s.activeIsWorthSealing, s.work.rolloverRequested, claimed, s.tail.takeWritebackDue(), s.wantsPreparedSegment)
        }
        requestWriteback(due)
        if let claimed { writeOutsideLock(claimed) }
        if worthSealing { schedule(.lookForCompaction) }
        if seal { sealInBackground() } else if prepare { prepareReporting() }
        prepareIndexTable()
        return open
    }

    /// Makes the index's next slot table outside the lock when a growth is near: zeroing it
    /// (16 MB at a million keys) took 6 ms of the put that grew the index.
    /// A prepared table the index gave back (it stopped growing) is freed here, outside the lock.
    private func prepareIndexTable() {
        let tick = state.withLock { s -> (wanted: Int?, released: [UInt64]?) in s.isClosed ? (nil, nil) : s.keys.slotTablePreparationTick() }
        withExtendedLifetime(tick.released) {}   // the last reference: freed now
        guard let size = tick.wanted else { return }
        let table = [UInt64](repeating: 0, count: size)
        state.withLock { $0.keys.adoptPreparedSlotTable(table) }
    }

    /// Called by the buffer writer thread when a put handed off a full buffer: writes it outside
    /// the lock. Returns false once the store is closed.
    /// Also makes a writeback request a put noted (``SegmentWriter/startWritebackOfFlushedBytes()``).
    func writeHandedOffBuffer() -> Bool {
        let claimed = state.withLock { s -> (open: Bool, write: ClaimedWrite?, due: (file: SegmentFile, range: Range<Int64>)?) in
            guard !s.isClosed else { return (false, nil, nil) }
            let due = s.tail.takeWritebackDue()
            guard s.writer.hasPendingHandoff, let h = s.tail.claimHandoff() else { return (true, nil, due) }
            return (true, ClaimedWrite(handoff: h, handle: s.writer.file.handle, fs: s.writer.fs), due)
        }
        requestWriteback(claimed.due)
        if let write = claimed.write { writeOutsideLock(write) }
        return claimed.open
    }

    /// Writes a claimed handoff outside the lock, then records the outcome under it. A failed
    /// write is counted and logged; the next flush under the lock cuts it off and writes again.
    private func writeOutsideLock(_ w: ClaimedWrite) {
        w.handoff.write(to: w.handle, fs: w.fs)
        let due = state.withLock { s in
            s.tail.finishHandoff(w.handoff)
            if let error = w.handoff.error {
                s.stats.backgroundFailures += 1
                options.logger.warning("background write failed: \(error)")
            }
            return s.tail.takeWritebackDue()
        }
        requestWriteback(due)
    }

    /// Asks the OS to start writing flushed bytes back (``SegmentWriter/startWritebackOfFlushedBytes()``),
    /// outside the lock: the request can wait for the device's queue.
    func requestWriteback(_ due: (file: SegmentFile, range: Range<Int64>)?) {
        guard let due else { return }
        due.file.fileSystem.startWriteback(due.file.handle, offset: due.range.lowerBound, count: Int64(due.range.count))
    }

    /// Seals the nearly full active segment off the write path (format-spec.md, "Rollover"),
    /// with no `fdatasync` under the lock or on this thread: the next segment is created outside
    /// the lock (unless it was already, ``prepareNextSegment()``) and the buffered records
    /// written; in one slice of the lock the next segment becomes active behind a shut gate.
    /// The hint writer then syncs the sealed segment before writing its hint, and the next tick
    /// opens the gate (and, once the new segment is half full, prepares the one after it). Where the gate cannot be used
    /// (writes wait for a sync), the slice seals with a sync as ``StoreState/rollover()`` does.
    /// A failure is counted and logged; the write that fills the segment then seals it itself. A
    /// failed sync of the sealed segment keeps the gate shut: every later write that needs it
    /// throws that error, until the store is reopened.
    private func sealInBackground() {
        do throws(CaskError) {
            try prepareNextSegment()
            writeBufferOutsideLock()   // what the switch writes under the lock is then short
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

    /// ``prepareNextSegment()``, a failure counted and logged (the rollover then creates the
    /// segment itself).
    private func prepareReporting() {
        do throws(CaskError) { try prepareNextSegment() } catch {
            state.noteBackgroundFailure("could not prepare the next segment", error)
        }
    }

    /// Hands the active segment's buffered records to the OS outside the lock (nothing when the
    /// buffer writer thread is writing a handoff already, or the gate is shut).
    private func writeBufferOutsideLock() {
        let claimed = state.withLock { s in
            s.tail.claimHandoff().map { ClaimedWrite(handoff: $0, handle: s.writer.file.handle, fs: s.writer.fs) }
        }
        if let claimed { writeOutsideLock(claimed) }
    }

    /// Creates the next log segment outside the lock, durable with its directory entry, and
    /// keeps it for the rollover (``StoreState/reserveNextSegment()``). One that came too late
    /// (a write sealed the segment first) is removed again.
    func prepareNextSegment() throws(CaskError) {
        let reserved = state.withLock { s in s.reserveNextSegment().map { ($0, s.writer.id) } }
        guard let (header, follows) = reserved else { return }
        let file = try StoreFiles.createSegment(header, in: directory, fs: options.fileSystem, mapLength: options.segmentSize)
        if state.withLock({ $0.adoptPrepared(file, header: header, follows: follows) }) { return }
        try options.fileSystem.remove(file.path)   // its descriptor closes with `file`
    }

    /// Called by the sync thread of `.interval(d)`, at least `d` after its previous run: flushes
    /// and `fdatasync`s the active segment when it holds unsynced records. Returns false once the
    /// store is closed.
    /// The `fdatasync` runs outside the store's lock (``StoreStateLock/syncActiveOutsideLock()``):
    /// a second of writes can take milliseconds to sync, and no put waits for it.
    func backgroundSync() -> Bool {
        guard let waiting = waitingRecords else { return false }
        guard waiting.unsynced else { return true }
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
