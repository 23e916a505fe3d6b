import CaskFormat

/// A handoff claimed for writing outside the store's lock, with the file it goes to.
struct ClaimedWrite: @unchecked Sendable {   // the handle is written through `fs`, the handoff is Sendable
    let handoff: Handoff
    let handle: CaskFileHandle
    let fs: any CaskFileSystem
}

/// One step of the flush thread or the buffer writer thread (DiskStore+Background.swift), as a
/// plan/apply pair: ``StoreState/planFlushStep(_:)`` decides under the store's lock what I/O the
/// step does, ``perform()`` does it without the lock, and ``StoreState/applyFlushStep(_:)``
/// records what it made under the lock again. Two holds of the lock per step, whatever it does.
struct FlushStep: @unchecked Sendable {   // its files are used by one thread at a time
    enum Role {
        /// The flush thread: the flush deadline, the background rollover's preparation, the
        /// index's next slot table.
        case flushThread
        /// The buffer writer thread: only a handed-off full buffer.
        case bufferWriter
        /// The flush thread just before it seals: the buffered records, so that what the seal
        /// writes under the lock is short.
        case sealing
    }

    /// The handed-off buffer to write outside the lock.
    fileprivate(set) var write: ClaimedWrite?
    /// A writeback request due (``SegmentWriter/startWritebackOfFlushedBytes()``).
    fileprivate(set) var writeback: (file: SegmentFile, range: Range<Int64>)?
    /// The active segment became worth sealing once idle (the compaction thread is armed).
    fileprivate(set) var worthSealing = false
    /// The active segment is nearly full: the flush thread seals it after this step.
    fileprivate(set) var seals = false
    /// The next segment, reserved, to be created outside the lock (``StoreState/reserveNextSegment()``),
    /// and the id of the segment it follows.
    fileprivate(set) var nextSegment: (header: SegmentHeader, follows: UInt32)?
    /// Slots of the index's next slot table, to be zeroed outside the lock (16 MB at a million
    /// keys took 6 ms of the put that grew the index).
    fileprivate(set) var slotTableSize: Int?
    /// A prepared slot table the index gave back (it stopped growing), freed with the step,
    /// outside the lock.
    fileprivate(set) var releasedSlotTable: [UInt64]?
    /// A background flush that failed under the lock (counted; logged by the caller).
    fileprivate(set) var flushFailure: CaskError?

    // What ``perform()`` made.
    /// The segment created for ``nextSegment``.
    private(set) var createdSegment: SegmentFile?
    /// Why the segment could not be created (the rollover then creates it itself).
    private(set) var creationFailure: CaskError?
    /// The slot table made for ``slotTableSize``.
    private(set) var slotTable: [UInt64]?

    /// Does the step's I/O, outside the lock: the writeback request, the buffer's write, the
    /// next segment's creation (durable with its directory entry) and the slot table.
    mutating func perform(directory: String, options: StoreOptions) {
        Self.requestWriteback(writeback)
        if let w = write { w.handoff.write(to: w.handle, fs: w.fs) }
        if let next = nextSegment {
            do throws(CaskError) {
                createdSegment = try StoreFiles.createSegment(next.header, in: directory, fs: options.fileSystem, mapLength: options.segmentSize)
            } catch { creationFailure = error }
        }
        if let size = slotTableSize { slotTable = [UInt64](repeating: 0, count: size) }
    }

    /// Asks the OS to start writing `due` back (``SegmentWriter/startWritebackOfFlushedBytes()``),
    /// outside the lock: the request can wait for the device's queue.
    static func requestWriteback(_ due: (file: SegmentFile, range: Range<Int64>)?) {
        guard let due else { return }
        due.file.fileSystem.startWriteback(due.file.handle, offset: due.range.lowerBound, count: Int64(due.range.count))
    }

    /// The seal may go ahead: no segment had to be created, or it was.
    var canSeal: Bool { seals && creationFailure == nil }
}

/// What ``StoreState/applyFlushStep(_:)`` leaves for after the lock.
struct FlushStepResult: @unchecked Sendable {
    /// A writeback request that came due meanwhile.
    var writeback: (file: SegmentFile, range: Range<Int64>)?
    /// A created segment that came too late (a write sealed the active one first): the caller
    /// removes its file.
    var lateSegment: SegmentFile?
    /// Failures to log: what failed, and why.
    var failures: [(String, CaskError)] = []
}

extension StoreState {
    /// Plans a step of `role`'s thread (``FlushStep``); nil once the store is closed.
    mutating func planFlushStep(_ role: FlushStep.Role) -> FlushStep? {
        guard !isClosed else { return nil }
        var step = FlushStep()
        switch role {
        case .bufferWriter:
            if writer.hasPendingHandoff { step.claim(from: &self) }
        case .sealing:
            step.claim(from: &self)
        case .flushThread:
            // The hint writer syncs a sealed segment (``DiskStore/writeHints(_:)``): once it
            // has, the gate opens here, and what waited behind it is written by this step.
            tail.openGateIfDurable()
            if writer.isGated {
                // Nothing of the active segment is written before the sealed one is durable.
            } else if !step.claim(from: &self), writer.handoff == nil || writer.needsTruncate {
                // While the buffer writer writes an earlier handoff, nothing waits for it under
                // the lock: the deadline flush comes again. After a failed write, this flush
                // cuts it off and retries.
                do throws(CaskError) { try flush() } catch {
                    stats.backgroundFailures += 1
                    step.flushFailure = error
                }
            }
            step.planSeal(in: &self)
        }
        step.writeback = tail.takeWritebackDue()
        return step
    }

    /// Records what a step's I/O made: the handoff's outcome (a failed write is counted; the
    /// next flush cuts it off and writes again), the prepared segment, the slot table.
    mutating func applyFlushStep(_ step: FlushStep) -> FlushStepResult {
        var result = FlushStepResult()
        if let w = step.write {
            tail.finishHandoff(w.handoff)
            if let error = w.handoff.error { result.failures.append(("background write failed", error)) }
        }
        if let error = step.creationFailure { result.failures.append(("could not prepare the next segment", error)) }
        if let file = step.createdSegment, let next = step.nextSegment,
           !adoptPrepared(file, header: next.header, follows: next.follows) { result.lateSegment = file }
        if let table = step.slotTable, !isClosed { keys.adoptPreparedSlotTable(table) }
        stats.backgroundFailures += result.failures.count
        result.writeback = tail.takeWritebackDue()
        return result
    }
}

extension FlushStep {
    /// Claims the handed-off buffer, if there is one. Returns whether it did.
    @discardableResult
    fileprivate mutating func claim(from s: inout StoreState) -> Bool {
        guard let h = s.tail.claimHandoff() else { return false }
        write = ClaimedWrite(handoff: h, handle: s.writer.file.handle, fs: s.writer.fs)
        return true
    }

    /// The flush thread's part: whether to seal or prepare the next segment, and the slot table.
    fileprivate mutating func planSeal(in s: inout StoreState) {
        worthSealing = s.activeIsWorthSealing
        seals = s.work.rolloverRequested
        if seals || s.wantsPreparedSegment { nextSegment = s.reserveNextSegment().map { ($0, s.writer.id) } }
        (slotTableSize, releasedSlotTable) = s.keys.slotTablePreparationTick()
    }
}
