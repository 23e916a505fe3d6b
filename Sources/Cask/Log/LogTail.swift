import CaskFormat

/// The end of the log that grows: the active segment's writer, the sealer of the records it
/// appends, the log's numbering, the segment prepared to follow the active one, and whether the
/// log is closed (format-spec.md, "Writing protocol" and "Rollover").
///
/// Invariants (``invariantViolation()``): a prepared segment follows the active one; the active
/// segment's id was issued (it is below the next segment id); the numbering's own
/// (``LogNumbers``). Every change goes through the functions here and in LogTail+Rollover.swift;
/// ``StoreState`` coordinates them with the segment set and the pending work.
///
/// Not thread-safe: a part of ``StoreState``, changed under the store's lock.
struct LogTail: Sendable {
    /// The store directory its segments are created in.
    let directory: String
    /// Appends to the active segment.
    private(set) var writer: SegmentWriter
    /// Seals the values this open writes (encryption on).
    private var sealer: RecordSealer?
    /// The next sequence number and segment id, and the reservation (LogNumbers.swift).
    private(set) var numbers: LogNumbers
    /// The next log segment, created ahead of its rollover outside the lock.
    private(set) var preparedSegment: PreparedSegment?
    /// Closed: nothing is appended, prepared or synced any more.
    private(set) var isClosed = false

    /// A tail that continues a log whose newest record took `nextSequence − 1`, appending to
    /// `writer`'s segment, sealing with `keyring` (nil: no encryption).
    init(directory: String, writer: SegmentWriter, nextSequence: UInt64, keyring: Keyring?) {
        self.directory = directory
        self.writer = writer
        self.numbers = LogNumbers(nextSequence: nextSequence, activeSegment: writer.id)
        self.sealer = keyring.map(RecordSealer.init)
    }

    /// Encodes one record at the end of the active segment (in the write buffer) with the next
    /// sequence number; returns its index entry and its size on disk. Nothing is in effect yet.
    /// - Throws: ``CaskError/corruption(file:offset:reason:)`` once the last sequence number was
    ///   issued, ``CaskError/valueTooLarge(size:maximum:)`` when the seal would not fit, and what
    ///   appending throws; nothing changed then.
    mutating func append(_ record: RecordWrite, now: Int64) throws(CaskError) -> (entry: IndexEntry, size: Int64) {
        let (kind, key, stored, flags, expiry) = (record.kind, record.key, record.stored, record.flags, record.expiry)
        // A record past the last sequence number would be read back as damage (format-spec.md,
        // "Sequence numbers"): refuse it, unwritten, instead.
        guard Format.isPlausibleSequence(numbers.nextSequence) else {
            throw .corruption(file: directory, offset: 0, reason: "the last sequence number (\(Format.maximumSequence)) was issued; \(StoreLoader.noSequenceLeft)")
        }
        // Values and pin records are sealed (a pin's plaintext is empty: its seal authenticates it).
        let sealed = (kind == .value || kind == .pin) && sealer != nil
        let header = RecordHeader(
            sequence: numbers.nextSequence, writeTime: now, expiry: expiry, kind: kind,
            flags: sealed ? flags | Format.RecordFlag.sealed : flags, keyLength: key.count,
            storedLength: sealed ? stored.count + Format.Seal.overhead : stored.count, originalLength: record.originalLength)
        // The seal's 32 bytes must fit the format's limit too (maximumValueSize may be 1 GiB).
        guard header.storedLength <= Format.maximumValueLength else {
            throw .valueTooLarge(size: record.originalLength, maximum: Format.maximumValueLength - Format.Seal.overhead)
        }
        let offset = sealed ? try writer.append(header, key: key, sealing: stored, with: &sealer!)
                            : try writer.append(header, key: key, value: stored)
        let entry = IndexEntry(
            segment: writer.id, offset: UInt32(offset), storedLength: UInt32(header.storedLength),
            sequence: numbers.nextSequence, expiry: kind == .tombstone ? 0 : expiry,
            accessTime: now, flags: kind == .tombstone ? IndexEntry.tombstoneFlag : flags, keyLength: UInt16(key.count))
        numbers.takeSequence()
        return (entry, Int64(header.encodedSize))
    }

    /// Issues a segment id for a compaction output.
    mutating func takeSegmentID() -> UInt32 { numbers.takeSegmentID() }

    /// Closes the tail: nothing is appended, prepared or synced any more. The prepared segment
    /// is the caller's to discard first (``discardPrepared(fs:)``).
    mutating func close() { isClosed = true }

    // MARK: The active segment's writer

    /// Hands the write buffer to the OS.
    mutating func flush() throws(CaskError) { try writer.flush() }

    /// `fdatasync`s what was flushed; true when a sync ran.
    mutating func sync() throws(CaskError) -> Bool { try writer.sync() }

    /// Forgets records appended at or after `offset` (a failed durable write).
    mutating func undo(to offset: Int64) { writer.undo(to: offset) }

    /// The active segment is durable through `offset` (a sync outside the lock).
    mutating func markSynced(through offset: Int64) { writer.markSynced(through: offset) }

    /// The next write seals the active segment first (a failed sync: it is never trusted again).
    mutating func requireRollover() { writer.needsRollover = true }

    /// Opens the gate once the sealed segment behind it is durable.
    mutating func openGateIfDurable() {
        if let gate = writer.predecessor, gate.isDurable { writer.predecessor = nil }
    }

    /// Claims the handed-off buffer for writing outside the lock.
    mutating func claimHandoff() -> Handoff? { writer.claimHandoff() }

    /// Records the outcome of a claimed handoff's write.
    mutating func finishHandoff(_ h: Handoff) { writer.finishHandoff(h) }

    /// The writeback request due, if any (made outside the lock).
    mutating func takeWritebackDue() -> (file: SegmentFile, range: Range<Int64>)? { writer.takeWritebackDue() }

    /// A description of the first broken invariant, nil when all hold. O(1).
    func invariantViolation() -> String? {
        if let problem = numbers.invariantViolation() { return problem }
        if writer.id >= numbers.nextSegmentID && numbers.nextSegmentID != 0 {
            return "the active segment \(writer.id) was not issued (next id \(numbers.nextSegmentID))"
        }
        if let next = preparedSegment, next.follows != writer.id, !isClosed {
            return "the prepared segment \(next.file.id) follows \(next.follows), not the active \(writer.id)"
        }
        return nil
    }
}

/// The next log segment, created and made durable (with its directory entry) outside the lock
/// before the rollover that makes it active (format-spec.md, "Rollover").
struct PreparedSegment: Sendable {
    let file: SegmentFile
    let header: SegmentHeader
    /// The active segment it was prepared to follow.
    let follows: UInt32
}

/// The tail's side of a rollover: which segment becomes active, and the numbering that goes
/// with it. ``StoreState`` (StoreState+Rollover.swift) decides when, syncs, and tells the
/// segment set.
extension LogTail {
    /// The prepared segment, when it may follow the active one: prepared behind it, and above
    /// every sequence number it took (always, by the reservation's bound).
    var usablePrepared: PreparedSegment? {
        guard let next = preparedSegment, next.follows == writer.id, numbers.nextSequence <= next.header.minimumSequence else { return nil }
        return next
    }

    /// Makes the prepared segment `next` the active one (its records start at its
    /// `minimumSequence`), behind `gate` when the sealed segment is synced outside the lock.
    /// Returns the sealed segment's writer.
    mutating func activate(_ next: PreparedSegment, bufferCapacity: Int, behind gate: PredecessorSync?) -> SegmentWriter {
        preparedSegment = nil
        numbers.advance(to: next.header.minimumSequence)
        let sealed = writer
        writer = SegmentWriter(file: next.file, size: Int64(Format.segmentHeaderSize), bufferCapacity: bufferCapacity, writesBehind: true)
        writer.predecessor = gate
        return sealed
    }

    /// Makes a new log segment (with `flags`, format-spec.md "Segment header") the active one:
    /// the prepared one when it may follow and `flags` is 0, else a file created here. Starts at
    /// the reservation or above, so that a segment prepared for an earlier writer never claims
    /// a sequence number this one holds. The previous writer's unsynced bytes are the caller's.
    mutating func startSegment(flags: UInt8, options: StoreOptions) throws(CaskError) {
        writer.handoff?.waitForWrite()   // the flush thread may be writing to the old file
        numbers.advance(to: numbers.reservedMinimumSequence)
        if flags == 0, let next = usablePrepared {
            _ = activate(next, bufferCapacity: options.writeBufferSize, behind: nil)
            return
        }
        try discardPrepared(fs: options.fileSystem)
        let header = SegmentHeader(id: UInt64(numbers.nextSegmentID), kind: .log, flags: flags, minimumSequence: numbers.nextSequence,
                                   sequenceLimit: 0, keyID: options.writtenKeyID)
        writer = try SegmentWriter.start(header, in: directory, options: options)
        _ = numbers.takeSegmentID()
    }

    /// The header of the next log segment, reserved for creation outside the lock: the next
    /// id, and a `minimumSequence` above every sequence number the active segment can still
    /// take in `room` more bytes (one per `recordHeaderSize + 1` bytes, plus the one record
    /// that may cross it). Nil when a segment is already prepared or the tail is closed.
    mutating func reserveNextSegment(room: Int64, keyID: UInt32) -> SegmentHeader? {
        guard preparedSegment == nil, !isClosed else { return nil }
        let reserved = numbers.reserve(below: numbers.nextSequence + UInt64(max(0, room) / Int64(Format.recordHeaderSize + 1)) + 2)
        return SegmentHeader(id: UInt64(numbers.takeSegmentID()), kind: .log, flags: 0, minimumSequence: reserved,
                             sequenceLimit: 0, keyID: keyID)
    }

    /// Keeps a segment created for `header` as the next one, when the active segment is still
    /// the one it was reserved behind (`follows`). False when it is not: the caller removes it.
    mutating func adoptPrepared(_ file: SegmentFile, header: SegmentHeader, follows: UInt32) -> Bool {
        guard !isClosed, preparedSegment == nil, writer.id == follows, numbers.nextSequence <= header.minimumSequence else { return false }
        preparedSegment = PreparedSegment(file: file, header: header, follows: follows)
        return true
    }

    /// Removes a prepared segment that will not be used (`removeAll`, or a rollover that came
    /// first). It holds only its header: an open removes such a segment too.
    mutating func discardPrepared(fs: any CaskFileSystem) throws(CaskError) {
        guard let next = preparedSegment else { return }
        preparedSegment = nil
        try fs.remove(next.file.path)   // its descriptor closes with the last reference
    }
}
