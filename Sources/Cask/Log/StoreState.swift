import Logging
import CaskFormat

/// Bytes of one segment file and how many of them hold live records.
struct SegmentUsage: Sendable {
    var fileBytes: Int64
    var liveBytes: Int64
    /// Index entries pointing into the segment.
    var liveCount = 0
    /// No record in the segment has a lower sequence number (0 when unknown).
    var minimumSequence: UInt64 = 0
    /// Written by compaction (its records are sorted by sequence but older than its id suggests).
    var isCompacted = false
    /// The key id its records are sealed with (format version 7); 0 for unsealed records.
    var keyID: UInt32 = 0
    /// Its header failed its checks at open (its records were scanned): compaction rewrites it
    /// first, whatever its garbage, so that a repair leaves no damaged header behind.
    var headerDamaged = false
    /// Dead bytes the compaction that wrote this segment had to keep (tombstones and removal
    /// records that still hide older records): while the other segments still reach down to
    /// ``settledUntil``, rewriting them reclaims nothing, so they do not count as its garbage
    /// (Compactor+Plan.swift, SegmentSet.Edit.settle).
    var settledDeadBytes: Int64 = 0
    /// The lowest `minimumSequence` of the other segments (and of lingering inputs) when
    /// ``settledDeadBytes`` was set: once they all lie above it, the kept records may go.
    var settledUntil: UInt64 = 0
}

/// Where the live pin record of a key lies (format-spec.md, "Record": kind 3). Only the latest
/// pin record of a key whose value record is still the index's entry is live; its bytes count
/// as live bytes of its segment.
struct PinRecordLocation: Sendable, Equatable {
    var segment: UInt32
    var offset: UInt32
    /// Bytes of the record on disk (header and key).
    var size: Int
    /// The pin record's own sequence number.
    var sequence: UInt64
    /// The sequence number of the value record it modifies.
    var target: UInt64
}

/// Everything a ``DiskStore`` changes, kept behind its one mutex: the index, the open segments and
/// the active segment's ``SegmentWriter``. Methods here are called with the lock held and do no
/// locking.
///
/// Invariants: every index entry points at a segment in `segments`; the writer's segment is one
/// of them.
struct StoreState: Sendable {
    let options: StoreOptions
    /// Each key's current record and the live pin records (KeyDirectory.swift).
    var keys = KeyDirectory()
    /// The open segments and their accounting (SegmentSet.swift).
    var segmentSet = SegmentSet()
    /// The active segment's writer and sealer, the log's numbering, the prepared segment
    /// (LogTail.swift).
    var tail: LogTail
    var stats = StoreStatistics()
    /// Durable writes appended but not yet synced (StoreState+GroupCommit.swift).
    var commits = CommitQueue()
    /// Work left for after the lock and for the background threads (PendingWork.swift).
    var work = PendingWork()
    /// Eviction's candidates between writes (LimitController.swift).
    var limiter: LimitController

    /// The store directory.
    var directory: String { tail.directory }
    /// Where its file I/O goes (``StoreOptions/fileSystem``).
    var fs: any CaskFileSystem { options.fileSystem }
    /// Appends to the active segment (``LogTail/writer``), for reading.
    var writer: SegmentWriter { _read { yield tail.writer } }
    /// The next sequence number and segment id (``LogTail/numbers``).
    var numbers: LogNumbers { tail.numbers }
    /// Closed: every call throws ``CaskError/closed`` (``LogTail/isClosed``).
    var isClosed: Bool { tail.isClosed }
    /// Removal records whose walk is under way (``PendingWork/sweeping``).
    var sweeping: [UInt64: [UInt8]] { work.sweeping }
    var limits: StoreLimits { options.limits }
    /// The open segment files (``SegmentSet/files``), for reading.
    var segments: [UInt32: SegmentFile] { _read { yield segmentSet.files } }
    /// Each open segment's usage (``SegmentSet/usage``), for reading.
    var usage: SegmentUsages { _read { yield segmentSet.usage } }
    /// Sizes of the open segments' hint files (``SegmentSet/hintBytes``), for reading.
    var hintBytes: [UInt32: Int64] { _read { yield segmentSet.hintBytes } }
    /// See ``SegmentSet/lingeringMinimumSequence``.
    var lingeringMinimumSequence: UInt64 { segmentSet.lingeringMinimumSequence }
    /// The index (``KeyDirectory/index``), for reading.
    var index: KeyIndex { _read { yield keys.index } }
    /// Bytes of the live records (``KeyDirectory/liveBytes``).
    var liveBytes: Int64 { keys.liveBytes }
    /// Live items with a time to live (``KeyDirectory/expiringCount``).
    var expiringCount: Int { keys.expiringCount }
    /// The active segment.
    var active: SegmentFile { writer.file }

    init(directory: String, options: StoreOptions, writer: SegmentWriter, nextSequence: UInt64) {
        self.options = options
        self.tail = LogTail(directory: directory, writer: writer, nextSequence: nextSequence, keyring: options.keyring)
        self.limiter = LimitController(countsRequests: options.limits.policy == .frequencyAware && options.limits.byteLimit != nil)
        addSegment(writer.file, size: writer.size, minimumSequence: nextSequence)
    }

    /// Starts tracking a segment file of `size` bytes whose records all have sequence numbers of
    /// at least `minimumSequence`.
    mutating func addSegment(_ file: SegmentFile, size: Int64, minimumSequence: UInt64, isCompacted: Bool = false, keyID: UInt32? = nil) {
        segmentSet.apply(.add(file, usage: SegmentUsage(fileBytes: size, liveBytes: 0, minimumSequence: minimumSequence,
                                                        isCompacted: isCompacted, keyID: keyID ?? options.writtenKeyID),
                              hintBytes: nil))
    }

    /// Makes `entry` the key's current record (or removes the key for a tombstone), keeping the
    /// live-byte accounting. Returns the entry it replaced.
    @discardableResult
    mutating func install(_ entry: IndexEntry, forKey key: UnsafeRawBufferPointer) -> IndexEntry? {
        if !entry.isTombstone { segmentSet.addLive(Int64(entry.recordSize), entries: 1, in: entry.segment) }
        let released = keys.install(entry, forKey: key)
        account(released)
        return released.entry
    }

    /// Takes records that left the key directory off their segments' live bytes.
    mutating func account(_ released: ReleasedRecords) {
        if let old = released.entry {
            segmentSet.addLive(-Int64(old.recordSize), entries: -1, in: old.segment)
            if old.segment != writer.id { work.noteSealedGarbage() }
        }
        if let pin = released.pin {
            segmentSet.addLive(-Int64(pin.size), in: pin.segment)
            if pin.segment != writer.id { work.noteSealedGarbage() }
        }
    }

    /// Removes an expired or damaged key from the index.
    mutating func drop(_ key: UnsafeRawBufferPointer) {
        account(keys.remove(key))
    }

    /// Forgets records appended at or after `offset` of the active segment (a failed durable write).
    mutating func undo(to offset: Int64) {
        segmentSet.grow(writer.id, by: offset - writer.size)
        tail.undo(to: offset)
    }

    // MARK: Flushing and syncing

    /// Hands the write buffer to the OS.
    mutating func flush() throws(CaskError) { try tail.flush() }

    /// Flushes and `fdatasync`s the active segment. A failed fsync is never retried and trusted:
    /// the writes it should have covered fail, and the segment is sealed before the next write.
    mutating func syncActive() throws(CaskError) {
        try tail.flush()
        guard writer.syncedSize < writer.flushedSize else { return }
        stats.segmentSyncs += 1
        do throws(CaskError) { _ = try tail.sync() } catch {
            failUnsynced(error, now: options.clock.now)
            throw error
        }
    }

    /// Makes the store empty (``DiskStore/removeAll()``): a new active segment marked as clearing
    /// every older one is made durable first (a failure changes nothing), then everything else is
    /// forgotten. Deleting the old files is the caller's.
    mutating func clear() throws(CaskError) {
        try startSegment(flags: Format.SegmentFlag.clearsOlder)
        segmentSet.apply(.clear(keeping: writer.id))
        keys.removeAll()
        work.dropHints()
    }

    /// Work a write leaves for after the lock: hint files to write, events to deliver, compaction.
    struct Deferred {
        var hints: [PendingHint] = []
        var events: [StoreEvent] = []
        /// The background jobs to start (``DiskStore/schedule(_:)``).
        var jobs: BackgroundJobs = []
        /// Disk use is in the byte limit's slow-down zone: the write waits this long before it
        /// returns (``StoreState/writeDelayNanoseconds``).
        var delayNanoseconds: UInt32 = 0
        var isEmpty: Bool { hints.isEmpty && events.isEmpty && !jobs.needsHandOver && delayNanoseconds == 0 }
    }

    /// Hands over what a write left to do once the lock is released. Allocates nothing when
    /// there is nothing to do (the common case). Past the hard limit the caller compacts before
    /// it returns (``BackgroundJobs/compactOnWritePath``, counted here as
    /// ``StoreStatistics/compactionsOnTheWritePath``).
    @inline(__always)
    mutating func takeDeferred() -> Deferred { takeDeferred(compactsOnWritePath: true) }

    /// ``takeDeferred()`` for the compaction thread's own work: no compaction is asked for (the
    /// thread compacts next, and asking from inside a run would wait for that run).
    mutating func takeBackgroundDeferred() -> Deferred {
        var d = takeDeferred(compactsOnWritePath: false)
        d.jobs.remove(.compact)
        return d
    }

    @inline(__always)
    private mutating func takeDeferred(compactsOnWritePath: Bool) -> Deferred {
        var d = Deferred()
        work.handOver(into: &d, sealDue: work.rolloverRequested || writer.predecessor != nil)
        if writer.hasPendingHandoff || writer.writebackDue != nil { d.jobs.insert(.writeBuffer) }
        if limits.byteLimit != nil {
            if !isOverHardLimit {
                d.delayNanoseconds = writeDelayNanoseconds
            } else if compactsOnWritePath {
                d.jobs.insert(.compactOnWritePath)
                stats.compactionsOnTheWritePath += 1
            }
            if d.delayNanoseconds > 0 { stats.delayedWrites += 1 }
        }
        if expiringCount > 0 || ageLimitMilliseconds > 0 || work.sealedGarbageGrew { d.jobs.insert(.lookForCompaction) }
        return d
    }

    /// Bytes of all segment and hint files, compaction inputs not yet unlinked included (the
    /// byte limit's back-pressure counts what is on disk).
    var fileBytes: Int64 { segmentSet.fileBytes }
}
