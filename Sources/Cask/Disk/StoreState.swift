import Logging

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
/// the active segment's writer. Methods here are called with the lock held and do no locking.
///
/// Invariants: `buffer` holds exactly the active segment's bytes `[flushedSize, activeSize)`;
/// `syncedSize <= flushedSize <= activeSize`; every index entry points at a segment in `segments`.
struct StoreState: Sendable {
    let directory: String
    let fs: any CaskFileSystem
    let options: StoreOptions

    var index = KeyIndex()
    /// The live pin record of each key that has one (keys' UTF-8 bytes). Pins are rare.
    var pinRecords: [[UInt8]: PinRecordLocation] = [:]
    var segments: [UInt32: SegmentFile] = [:]
    var usage: [UInt32: SegmentUsage] = [:]
    var hintBytes: [UInt32: Int64] = [:]
    var active: SegmentFile
    var activeSize: Int64
    var flushedSize: Int64
    var syncedSize: Int64
    /// A failed write may have left a partial record after `flushedSize`: cut it before appending.
    var needsTruncate = false
    /// A failed fsync makes the active segment suspect: start a new one before the next write.
    var needsRollover = false
    var buffer: WriteBuffer
    /// Hint entries of the active segment's records.
    var hints = HintBuilder()
    /// Hint files waiting to be written by the background writer (segment id, bytes).
    var pendingHints: [(UInt32, [UInt8])] = []
    var nextSequence: UInt64
    var nextSegmentID: UInt32
    var liveBytes: Int64 = 0
    /// Live items with a time to live (expiry sweeps are skipped while there are none and no
    /// age limit).
    var expiringCount = 0
    /// When compaction last swept for expired items (milliseconds since 1970).
    var lastExpirySweep: Int64 = 0
    var stats = StoreStatistics()
    /// Durable writes appended but not yet synced (StoreState+GroupCommit.swift).
    var awaitingSync: [PendingWrite] = []
    var nextTicket: UInt64 = 0
    /// Every ticket up to this one is settled (installed or failed).
    var committedTicket: UInt64 = 0
    /// Failed tickets, until their writer collects the error.
    var commitFailures: [UInt64: CaskError] = [:]
    var isClosed = false
    /// Events to deliver once the lock is released.
    var pendingEvents: [StoreEvent] = []
    /// Set when the limits or the garbage share call for a compaction.
    var wantsCompaction = false
    /// After a compaction failed to delete its inputs: the lowest sequence they may hold. They
    /// could reappear after a crash, so tombstones above it are kept.
    var lingeringMinimumSequence: UInt64 = .max
    /// Access times (seconds) below which a limit sweep found nothing more to evict.
    var limits: StoreLimits { options.limits }

    init(directory: String, options: StoreOptions, active: SegmentFile, nextSequence: UInt64) {
        self.directory = directory
        self.fs = options.fileSystem
        self.options = options
        self.active = active
        self.activeSize = Int64(Format.segmentHeaderSize)
        self.flushedSize = activeSize
        self.syncedSize = activeSize
        self.buffer = WriteBuffer(capacity: options.writeBufferSize)
        self.nextSequence = nextSequence
        self.nextSegmentID = active.id &+ 1
        segments[active.id] = active
        usage[active.id] = SegmentUsage(fileBytes: activeSize, liveBytes: 0, minimumSequence: nextSequence)
    }

    // MARK: Appending

    /// Encodes one record at the end of the active segment (in the write buffer) and returns the
    /// index entry describing it. The index is not changed: the caller installs the entry once the
    /// record is as durable as the store's mode requires.
    mutating func appendRecord(
        kind: Format.RecordKind,
        key: UnsafeRawBufferPointer,
        stored: UnsafeRawBufferPointer,
        originalLength: Int,
        flags: UInt8,
        expiry: Int64,
        now: Int64
    ) throws(CaskError) -> IndexEntry {
        if needsRollover || (activeSize >= Int64(options.segmentSize) && activeSize > Int64(Format.segmentHeaderSize)) {
            try rollover()
        }
        let size = RecordCodec.encodedSize(keyLength: key.count, storedLength: stored.count)
        if buffer.count > 0 && buffer.count + size > options.writeBufferSize {
            try flush()
        }
        let header = RecordHeader(
            sequence: nextSequence, writeTime: now, expiry: expiry, kind: kind, flags: flags,
            keyLength: key.count, storedLength: stored.count, originalLength: originalLength)
        buffer.append(size: size) { out in RecordCodec.encode(header, key: key, value: stored, into: out) }
        hints.add(header, offset: Int(activeSize), key: key)
        let entry = IndexEntry(
            segment: active.id, offset: UInt32(activeSize), storedLength: UInt32(stored.count),
            originalLength: UInt32(originalLength), sequence: nextSequence, writeTime: now, expiry: expiry,
            accessTime: now, flags: kind == .tombstone ? IndexEntry.tombstoneFlag : flags, keyLength: UInt16(key.count))
        activeSize += Int64(size)
        usage[active.id, default: SegmentUsage(fileBytes: 0, liveBytes: 0)].fileBytes += Int64(size)
        nextSequence += 1
        stats.writes += 1
        stats.bytesWritten += Int64(size)
        return entry
    }

    // MARK: Pin records

    /// Makes the pin record at `location` the key's live one, replacing an earlier one, and
    /// counts its bytes as live. The index entry's flag is not changed here.
    mutating func setLivePinRecord(_ location: PinRecordLocation, forKey key: UnsafeRawBufferPointer) {
        if let old = pinRecords.updateValue(location, forKey: Array(key)) { forgetPinRecord(old) }
        usage[location.segment]?.liveBytes += Int64(location.size)
        liveBytes += Int64(location.size)
    }

    /// The key's pin record (if any) is dead: its value record was replaced or removed.
    @inline(__always)
    mutating func dropPinRecord(forKey key: UnsafeRawBufferPointer) {
        guard !pinRecords.isEmpty, let old = pinRecords.removeValue(forKey: Array(key)) else { return }
        forgetPinRecord(old)
    }

    /// Accounts for a pin record that is no longer live.
    mutating func forgetPinRecord(_ old: PinRecordLocation) {
        usage[old.segment]?.liveBytes -= Int64(old.size)
        liveBytes -= Int64(old.size)
    }

    /// Sets or clears the pinned flag of the key's index entry in place (sequence, location,
    /// times and expiry stay) and makes `record` the key's live pin record.
    mutating func applyPin(_ pinned: Bool, record: PinRecordLocation, forKey key: UnsafeRawBufferPointer) {
        index.withEntry(forKey: key) { e in
            if pinned { e.flags |= Format.RecordFlag.pinned } else { e.flags &= ~Format.RecordFlag.pinned }
        }
        setLivePinRecord(record, forKey: key)
    }

    /// Makes `entry` the key's current record (or removes the key for a tombstone), keeping the
    /// live-byte accounting. Returns the entry it replaced.
    @discardableResult
    mutating func install(_ entry: IndexEntry, forKey key: UnsafeRawBufferPointer) -> IndexEntry? {
        let old: IndexEntry?
        if entry.isTombstone {
            old = index.removeValue(forKey: key)
        } else {
            old = index.updateValue(entry, forKey: key)
            usage[entry.segment]?.liveBytes += Int64(entry.recordSize)
            usage[entry.segment]?.liveCount += 1
            liveBytes += Int64(entry.recordSize)
            if entry.expiry != 0 { expiringCount += 1 }
        }
        if let old {
            forget(old)
            dropPinRecord(forKey: key)
        }
        return old
    }

    /// Accounts for an entry that no longer holds a live item.
    mutating func forget(_ old: IndexEntry) {
        usage[old.segment]?.liveBytes -= Int64(old.recordSize)
        usage[old.segment]?.liveCount -= 1
        liveBytes -= Int64(old.recordSize)
        if old.expiry != 0 { expiringCount -= 1 }
    }

    /// Removes an expired or damaged key from the index.
    mutating func drop(_ key: UnsafeRawBufferPointer) {
        if let old = index.removeValue(forKey: key) {
            forget(old)
            dropPinRecord(forKey: key)
        }
    }

    /// Forgets records appended at or after `offset` of the active segment (a failed durable write).
    mutating func undo(to offset: Int64) {
        let removed = activeSize - offset
        if offset >= flushedSize {
            buffer.count = Int(offset - flushedSize)
        } else {
            buffer.reset()
            flushedSize = offset
            syncedSize = min(syncedSize, offset)
            needsTruncate = true
        }
        activeSize = offset
        usage[active.id]?.fileBytes -= removed
        hints.removeRecords(from: Int(offset))
    }

    // MARK: Flushing and syncing

    /// Hands the write buffer to the OS with as few `write(2)` calls as it takes. On failure the
    /// buffer is kept and any partial write is cut off before the next attempt.
    mutating func flush() throws(CaskError) {
        if needsTruncate {
            try fs.truncate(active.handle, to: flushedSize)
            needsTruncate = false
        }
        guard buffer.count > 0 else { return }
        let fs = self.fs
        let handle = active.handle
        do throws(CaskError) {
            try buffer.withBytes { bytes throws(CaskError) in try fs.appendAll(handle, bytes) }
        } catch {
            needsTruncate = true
            throw error
        }
        flushedSize = activeSize
        buffer.reset()
    }

    /// Flushes and `fdatasync`s the active segment. A failed fsync is never retried and trusted:
    /// the segment is abandoned for a new one at the next write.
    mutating func syncActive() throws(CaskError) {
        try flush()
        guard syncedSize < flushedSize else { return }
        do throws(CaskError) {
            stats.segmentSyncs += 1
            try fs.sync(active.handle)
        } catch {
            needsRollover = true
            failUnsynced(error, now: options.clock.milliseconds())
            throw error
        }
        syncedSize = flushedSize
    }

    // MARK: Segments

    /// Seals the active segment and starts a new one (format-spec.md, "Rollover"): the old segment
    /// is synced, the new file is created with its header, synced, and the directory synced, before
    /// anything is written to it. The sealed segment's hint file is then written.
    mutating func rollover() throws(CaskError) {
        try flush()
        if syncedSize < flushedSize {
            do throws(CaskError) {
                stats.segmentSyncs += 1
                try fs.sync(active.handle)   // a failure here leaves the synced records as they were
            } catch {
                failUnsynced(error, now: options.clock.milliseconds())
                throw error
            }
            syncedSize = flushedSize
        }
        let header = SegmentHeader(id: UInt64(nextSegmentID), kind: .log, flags: 0, minimumSequence: nextSequence, sequenceLimit: 0)
        CrashPoint.rolloverBeforeNewSegment.reach()
        let file = try StoreFiles.createSegment(header, in: directory, fs: fs, mapLength: options.segmentSize)
        let sealed = active
        let sealedHint = hints.encoded(segmentID: sealed.id, segmentSize: activeSize)
        segments[file.id] = file
        usage[file.id] = SegmentUsage(fileBytes: Int64(Format.segmentHeaderSize), liveBytes: 0, minimumSequence: header.minimumSequence)
        active = file
        activeSize = Int64(Format.segmentHeaderSize)
        flushedSize = activeSize
        syncedSize = activeSize
        needsRollover = false
        needsTruncate = false
        nextSegmentID = file.id &+ 1
        hints = HintBuilder()
        pendingHints.append((sealed.id, sealedHint))
        wantsCompaction = true
    }

    /// Work a write leaves for after the lock: hint files to write, events to deliver, compaction.
    struct Deferred {
        var hints: [(UInt32, [UInt8])] = []
        var events: [StoreEvent] = []
        var wantsCompaction = false
        var mustCompact = false
        var isEmpty: Bool { hints.isEmpty && events.isEmpty && !wantsCompaction && !mustCompact }
    }

    /// Hands over what a write left to do once the lock is released. Allocates nothing when
    /// there is nothing to do (the common case).
    @inline(__always)
    mutating func takeDeferred() -> Deferred {
        var d = Deferred()
        if !pendingHints.isEmpty { d.hints = pendingHints; pendingHints = [] }
        if !pendingEvents.isEmpty { d.events = pendingEvents; pendingEvents = [] }
        if wantsCompaction { d.wantsCompaction = true; wantsCompaction = false }
        if limits.byteLimit != nil && isOverHardLimit { d.mustCompact = true }
        return d
    }

    /// Rewrites the hint files of sealed segments read since their hint was written, with the
    /// access times the index holds (on a clean close). Failures are logged: stale access times
    /// only make LRU order fall back to older times.
    mutating func refreshAccessTimesInHints() {
        for id in segments.keys.sorted() where id != active.id && segments[id]!.wasRead {
            let path = FileNames.join(directory, FileNames.hint(id))
            guard let handle = try? fs.open(path, mode: .read) else { continue }
            defer { fs.close(handle) }
            guard let bytes = try? fs.readWholeFile(handle), let size = usage[id]?.fileBytes else { continue }
            var body: [UInt8] = []
            var count = 0
            let index = self.index
            let failure = bytes.withUnsafeBytes { raw in
                HintFile.parse(raw, segmentID: UInt64(id), segmentSize: UInt64(size)) { e, key in
                    var entry = e
                    if let current = index.entry(forKey: key), current.segment == id, UInt64(current.offset) == e.offset {
                        entry.accessTime = max(e.accessTime, current.accessTime)
                    }
                    HintFile.appendEntry(entry, key: key, to: &body)
                    count += 1
                }
            }
            guard failure == nil else { continue }
            let hint = HintFile.encode(segmentID: UInt64(id), segmentSize: UInt64(size), entryCount: count, body: body)
            do {
                try StoreFiles.writeAtomically(hint, to: FileNames.hint(id), in: directory, fs: fs)
            } catch {
                options.logger.warning("could not refresh access times in \(path): \(error)")
            }
        }
        for file in segments.values { file.wasRead = false }
    }

    /// Writes the active segment's hint file now (on a clean close), with current access times.
    mutating func writeActiveHint() {
        do {
            let index = self.index
            let activeID = active.id
            let hint = hints.encoded(segmentID: active.id, segmentSize: activeSize) { key, offset in
                guard let e = index.entry(forKey: key), e.segment == activeID, Int(e.offset) == offset else { return nil }
                return e.accessTime
            }
            try StoreFiles.writeAtomically(hint, to: FileNames.hint(active.id), in: directory, fs: fs)
            hintBytes[active.id] = Int64(Format.hintHeaderSize + hints.body.count + Format.hintTrailerSize)
        } catch {
            stats.backgroundFailures += 1
            options.logger.warning("could not write the hint file of segment \(active.id): \(error)")
        }
    }

    /// Writes the hint file of a sealed segment, logging (not throwing) on failure: a missing hint
    /// only means the segment is scanned at the next open.
    mutating func writeHint(for id: UInt32) {
        guard let segment = segments[id] else { return }
        do throws(CaskError) {
            let bytes = try fs.readWholeFile(segment.handle)
            var body: [UInt8] = []
            var count = 0
            let index = self.index
            let summary = try bytes.withBytes { raw throws(CaskError) in
                try SegmentScanner.scan(raw, file: segment.path) { h, offset in
                    let keyBytes = UnsafeRawBufferPointer(rebasing: raw[(offset + Format.recordHeaderSize)..<(offset + Format.recordHeaderSize + h.keyLength)])
                    var access = h.writeTime
                    if let e = index.entry(forKey: keyBytes), e.sequence == h.sequence { access = e.accessTime }
                    HintFile.appendEntry(HintEntry(
                        sequence: h.sequence, offset: UInt64(offset), writeTime: h.writeTime, expiry: h.expiry,
                        accessTime: access, kind: h.kind, flags: h.flags, keyLength: h.keyLength,
                        storedLength: h.storedLength, originalLength: h.originalLength), key: keyBytes, to: &body)
                    count += 1
                }
            }
            guard summary.damage.isEmpty else {
                options.logger.warning("not writing a hint for damaged segment \(segment.path)")
                return
            }
            let hint = HintFile.encode(segmentID: UInt64(id), segmentSize: UInt64(bytes.count), entryCount: count, body: body)
            try StoreFiles.writeAtomically(hint, to: FileNames.hint(id), in: directory, fs: fs)
            hintBytes[id] = Int64(hint.count)
        } catch {
            stats.backgroundFailures += 1
            options.logger.warning("could not write the hint file of segment \(id): \(error)")
        }
    }

    /// Bytes of all segment and hint files.
    var fileBytes: Int64 {
        usage.values.reduce(0) { $0 + $1.fileBytes } + hintBytes.values.reduce(0, +)
    }
}
