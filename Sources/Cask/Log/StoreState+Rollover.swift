import CaskFormat

/// The next log segment, created and made durable (with its directory entry) outside the lock
/// before the rollover that makes it active (format-spec.md, "Rollover").
struct PreparedSegment: Sendable {
    let file: SegmentFile
    let header: SegmentHeader
    /// The active segment it was prepared to follow.
    let follows: UInt32
}

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
        let sealed = writer
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
        guard let next = usablePrepared, commits.isEmpty, !writer.needsRollover else { return nil }
        try writer.flush()
        let sealed = writer
        let gate = PredecessorSync(file: sealed.file)
        activate(next)
        writer.predecessor = gate
        stats.rolloversBehindGate += 1
        addSegment(next.file, size: writer.size, minimumSequence: next.header.minimumSequence)
        queueSealed(sealed, syncedBy: gate)
        return gate
    }

    /// The prepared segment, when it may follow the active one: prepared behind it, and above
    /// every sequence number it took (always, by the reservation's bound).
    private var usablePrepared: PreparedSegment? {
        guard let next = prepared, next.follows == writer.id, numbers.nextSequence <= next.header.minimumSequence else { return nil }
        return next
    }

    /// Makes the prepared segment `next` the active one (its records start at its
    /// `minimumSequence`). The caller adds it to the segments.
    private mutating func activate(_ next: PreparedSegment) {
        prepared = nil
        numbers.advance(to: next.header.minimumSequence)
        writer = SegmentWriter(file: next.file, size: Int64(Format.segmentHeaderSize), bufferCapacity: options.writeBufferSize, writesBehind: true)
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
    /// the prepared one, and makes it the active one. The previous writer's unsynced bytes are
    /// the caller's concern. Starts at ``reservedMinimumSequence`` or above, so that a segment
    /// prepared for an earlier writer never claims a sequence number this one holds.
    mutating func startSegment(flags: UInt8) throws(CaskError) {
        writer.handoff?.waitForWrite()   // the flush thread may be writing to the old file
        numbers.advance(to: numbers.reservedMinimumSequence)
        if flags == 0, let next = usablePrepared {
            activate(next)
        } else {
            try discardPrepared()
            let header = SegmentHeader(id: UInt64(numbers.nextSegmentID), kind: .log, flags: flags, minimumSequence: numbers.nextSequence,
                                       sequenceLimit: 0, keyID: options.writtenKeyID)
            writer = try SegmentWriter.start(header, in: directory, options: options)
            _ = numbers.takeSegmentID()
        }
        addSegment(writer.file, size: writer.size, minimumSequence: numbers.nextSequence)
    }

    // MARK: Preparing the next segment

    /// The header of the next log segment, reserved for creation outside the lock: the next
    /// id, and a `minimumSequence` above every sequence number the active segment can still
    /// take (one per `recordHeaderSize + 1` bytes up to ``inlineRolloverSize``, plus the one
    /// record that may cross it). Nil when a segment is already prepared.
    mutating func reserveNextSegment() -> SegmentHeader? {
        guard prepared == nil, !isClosed else { return nil }
        let room = max(0, inlineRolloverSize - writer.size)
        let reserved = numbers.reserve(below: numbers.nextSequence + UInt64(room / Int64(Format.recordHeaderSize + 1)) + 2)
        return SegmentHeader(id: UInt64(numbers.takeSegmentID()), kind: .log, flags: 0, minimumSequence: reserved,
                             sequenceLimit: 0, keyID: options.writtenKeyID)
    }

    /// Whether the flush thread should prepare the next segment now: segments of 1 MiB or more
    /// (sealed in the background), none prepared, and the active one at least half full (a
    /// store that writes little never pays for a segment it would not use).
    var wantsPreparedSegment: Bool {
        prepared == nil && options.segmentSize >= Self.backgroundRolloverMinimum && writer.size >= Int64(options.segmentSize / 2)
    }

    /// Keeps a segment created for `header` as the next one, when the active segment is still
    /// the one it was reserved behind (`follows`). False when it is not: the caller removes it.
    mutating func adoptPrepared(_ file: SegmentFile, header: SegmentHeader, follows: UInt32) -> Bool {
        guard !isClosed, prepared == nil, writer.id == follows, numbers.nextSequence <= header.minimumSequence else { return false }
        prepared = PreparedSegment(file: file, header: header, follows: follows)
        return true
    }

    /// Removes a prepared segment that will not be used (close, `removeAll`, or a rollover
    /// that came first). It holds only its header: an open removes such a segment too.
    mutating func discardPrepared() throws(CaskError) {
        guard let next = prepared else { return }
        prepared = nil
        try fs.remove(next.file.path)   // its descriptor closes with the last reference
    }
}
