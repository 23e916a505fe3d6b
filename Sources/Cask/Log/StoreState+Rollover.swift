import CaskFormat

/// Sealing the active segment and starting the next (format-spec.md, "Rollover").
extension StoreState {
    /// Segments of at least this many bytes are sealed in the background (format-spec.md,
    /// "Rollover"); smaller ones only by the write that fills them.
    static let backgroundRolloverMinimum = 1 << 20

    /// The size at which the flush thread is asked to seal the active segment: 7/8 of
    /// `segmentSize` (never, below ``backgroundRolloverMinimum``). The write that reaches
    /// ``inlineRolloverSize`` seals it itself if the flush thread has not yet.
    var backgroundRolloverSize: Int64 {
        options.segmentSize >= Self.backgroundRolloverMinimum ? Int64(options.segmentSize - options.segmentSize / 8) : .max
    }

    /// The size at which a write seals the active segment itself: `segmentSize`, or for a
    /// segment the flush thread seals (``backgroundRolloverSize``), 9/8 of it, so that the flush
    /// thread has a quarter of a segment's writes to get there first: a write that seals a
    /// segment waits for its `fdatasync` (55 ms measured under compaction's I/O).
    var inlineRolloverSize: Int64 {
        let size = Int64(options.segmentSize)
        return options.segmentSize >= Self.backgroundRolloverMinimum ? size + size / 8 : size
    }

    /// Seals the active segment and starts a new one, syncing under the lock: the old segment
    /// is synced, the new one (the prepared one, else a file created here with its header,
    /// synced, and the directory synced) made active. The sealed segment's hint file is queued.
    mutating func rollover() throws(CaskError) {
        try syncActive()
        CrashPoint.rolloverBeforeNewSegment.reach()
        let sealed = tail.writer
        try startSegment(flags: 0)
        queueSealed(sealed, syncedBy: nil)
    }

    /// The background seal's rollover: the prepared segment becomes active without a sync under
    /// the lock. The old segment's buffered records are written (what came since the flush
    /// thread last wrote: usually under one write buffer), and its `fdatasync` is left to the
    /// returned ``PredecessorSync``, which shuts the new segment's gate until it is done. Nil
    /// (nothing changed) when there is no prepared segment for the active one, or writes wait
    /// for a sync (the group commit syncs the active segment, not the sealed one): then
    /// ``rollover()``.
    mutating func rolloverBehindGate() throws(CaskError) -> PredecessorSync? {
        guard let next = tail.usablePrepared, commits.isEmpty, !writer.needsRollover else { return nil }
        try tail.flush()
        let gate = PredecessorSync(file: writer.file)
        let sealed = tail.activate(next, bufferCapacity: options.writeBufferSize, behind: gate)
        stats.rolloversBehindGate += 1
        addSegment(next.file, size: writer.size, minimumSequence: next.header.minimumSequence)
        queueSealed(sealed, syncedBy: gate)
        return gate
    }

    /// After the active segment was replaced: queues its hint (written once the segment is
    /// durable) and asks for a compaction.
    private mutating func queueSealed(_ sealed: SegmentWriter, syncedBy gate: PredecessorSync?) {
        // The hint writer encodes it (a hint of a 64 MiB segment is megabytes: never under the
        // lock), or scans the sealed segment when its writer did not see all of its records.
        work.rolledOver(hint: PendingHint(
            segment: sealed.id, entries: sealed.hasCompleteHints ? sealed.hints : nil, segmentSize: sealed.size, after: gate))
    }

    /// Creates the next log segment (with `flags`, format-spec.md "Segment header"), or takes
    /// the prepared one, makes it the active one and adds it to the segments
    /// (``LogTail/startSegment(flags:options:)``). The previous writer's unsynced bytes are the
    /// caller's concern.
    mutating func startSegment(flags: UInt8) throws(CaskError) {
        try tail.startSegment(flags: flags, options: options)
        addSegment(writer.file, size: writer.size, minimumSequence: numbers.nextSequence)
    }

    // MARK: Preparing the next segment

    /// The header of the next log segment, reserved for creation outside the lock
    /// (``LogTail/reserveNextSegment(room:keyID:)``, with the room left up to
    /// ``inlineRolloverSize``). Nil when a segment is already prepared.
    mutating func reserveNextSegment() -> SegmentHeader? {
        tail.reserveNextSegment(room: inlineRolloverSize - writer.size, keyID: options.writtenKeyID)
    }

    /// Whether the flush thread should prepare the next segment now: segments of 1 MiB or more
    /// (sealed in the background), none prepared, and the active one at least half full (a
    /// store that writes little never pays for a segment it would not use).
    var wantsPreparedSegment: Bool {
        tail.preparedSegment == nil && options.segmentSize >= Self.backgroundRolloverMinimum && writer.size >= Int64(options.segmentSize / 2)
    }

    /// Keeps a segment created for `header` as the next one (``LogTail/adoptPrepared(_:header:follows:)``).
    mutating func adoptPrepared(_ file: SegmentFile, header: SegmentHeader, follows: UInt32) -> Bool {
        tail.adoptPrepared(file, header: header, follows: follows)
    }

    /// Removes a prepared segment that will not be used (close, `removeAll`, or a rollover
    /// that came first).
    mutating func discardPrepared() throws(CaskError) { try tail.discardPrepared(fs: fs) }

    /// The last writes of a close: syncs the active segment, puts the waiting writes in
    /// effect, removes an unused prepared segment and writes the index snapshot (it stands for
    /// the active segment's hint; without it, the hint is written).
    mutating func finishWriting() throws(CaskError) {
        try syncActive()
        installDurable(now: options.clock.now)
        do throws(CaskError) { try discardPrepared() } catch {
            // Only a header: the next open removes it.
            options.logger.warning("could not remove the unused next segment: \(error)")
        }
        if !writeSnapshot() && writer.hasCompleteHints { writeActiveHint() }
    }
}
