import CaskFormat

/// Appends records to one segment file: the store's active segment, or a compaction's output.
/// Owns the file, how much of it is written, handed to the OS and durable, the write buffer, and
/// the hint entries of the records written so far. Knows nothing of the index or the limits.
///
/// Invariants: the bytes `flushedSize ..< size` are in memory: those before `handoff.end` in the
/// ``Handoff`` (when there is one), the rest in the write buffer; and
/// `syncedSize <= flushedSize <= size`. Not thread-safe: the store calls it with its lock held
/// (the flush thread writes a claimed handoff outside it, SegmentWriter+Handoff.swift).
struct SegmentWriter: Sendable {
    /// The file being written (its id names it; readers reach it through the store's segments).
    private(set) var file: SegmentFile
    /// Bytes of the segment, header included, written so far (some may still be buffered).
    private(set) var size: Int64
    /// Bytes handed to the OS with `write(2)`.
    var flushedSize: Int64
    /// Bytes made durable by `fdatasync`.
    private(set) var syncedSize: Int64
    /// The hint entries of the records written so far (format-spec.md, "Hint file").
    private(set) var hints = HintBuilder()
    /// A failed fsync makes the segment suspect: the store seals it before the next write.
    var needsRollover = false
    /// A failed write may have left a partial record after `flushedSize`: cut it first.
    var needsTruncate = false
    var buffer: WriteBuffer
    let bufferCapacity: Int
    /// The full buffer handed to the flush thread: the bytes `flushedSize ..< handoff.end`.
    var handoff: Handoff?
    /// The buffer of the last completed handoff, for the next one.
    var spare: WriteBuffer?
    /// Whether a full buffer goes to the flush thread (the active segment) rather than being
    /// written by the appending thread (a compaction's output).
    let writesBehind: Bool
    /// The sync the segment sealed before this one still owes: until it is done nothing of this
    /// segment is handed to the OS (SegmentWriter+Handoff.swift, ``isGated``).
    var predecessor: PredecessorSync?

    /// A writer for `file`, whose first `size` bytes are already durable and hold the records
    /// `hints` lists.
    init(file: SegmentFile, size: Int64, bufferCapacity: Int, hints: HintBuilder = HintBuilder(), writesBehind: Bool = false) {
        self.writesBehind = writesBehind
        self.file = file
        self.size = size
        self.flushedSize = size
        self.syncedSize = size
        self.bufferCapacity = bufferCapacity
        self.buffer = WriteBuffer(capacity: bufferCapacity)
        self.hints = hints
    }

    /// Creates the segment file for `header` in `directory`, durable with its directory entry
    /// before any record is written to it (format-spec.md, "Rollover"), and returns its writer.
    static func start(_ header: SegmentHeader, in directory: String, options: StoreOptions) throws(CaskError) -> SegmentWriter {
        let file = try StoreFiles.createSegment(header, in: directory, fs: options.fileSystem, mapLength: options.segmentSize)
        return SegmentWriter(file: file, size: Int64(Format.segmentHeaderSize), bufferCapacity: options.writeBufferSize, writesBehind: true)
    }

    /// A writer for a compaction's output at `path` (a temporary name), created empty with its
    /// header buffered like a record: nothing of it is durable before ``sync()``.
    static func output(_ header: SegmentHeader, at path: String, fs: any CaskFileSystem) throws(CaskError) -> SegmentWriter {
        let handle = try fs.open(path, mode: .createTruncate)
        let file = SegmentFile(id: UInt32(header.id), path: path, handle: handle, fileSystem: fs)
        var writer = SegmentWriter(file: file, size: 0, bufferCapacity: 1 << 20)
        let bytes = header.encoded()
        writer.buffer.append(size: bytes.count) { out in bytes.withUnsafeBytes { out.copyMemory(from: $0) } }
        writer.size = Int64(bytes.count)
        return writer
    }

    var id: UInt32 { file.id }
    var fs: any CaskFileSystem { file.fileSystem }
    /// Where the write buffer's bytes start in the segment.
    var bufferStart: Int64 { handoff?.end ?? flushedSize }
    /// Whether no record has been written after the header.
    var isEmpty: Bool { size <= Int64(Format.segmentHeaderSize) }

    // MARK: Appending

    /// Encodes one record at the end of the segment (in the write buffer, flushed first when it
    /// would overflow) and returns its offset. `accessTime` goes into the record's hint entry.
    mutating func append(
        _ header: RecordHeader, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, accessTime: Int64? = nil
    ) throws(CaskError) -> Int64 {
        let recordSize = RecordCodec.encodedSize(keyLength: key.count, storedLength: value.count)
        if buffer.count > 0 && buffer.count + recordSize > bufferCapacity { try makeRoom() }
        let offset = size
        buffer.append(size: recordSize) { out in RecordCodec.encode(header, key: key, value: value, into: out) }
        hints.add(header, offset: Int(offset), key: key, accessTime: accessTime)
        size += Int64(recordSize)
        return offset
    }

    /// Encodes one value record whose stored value `sealer` seals from `plaintext` (`header`
    /// already has the sealed flag and the sealed length) and returns its offset.
    mutating func append(
        _ header: RecordHeader, key: UnsafeRawBufferPointer, sealing plaintext: UnsafeRawBufferPointer,
        with sealer: inout RecordSealer, accessTime: Int64? = nil
    ) throws(CaskError) -> Int64 {
        let recordSize = header.encodedSize
        if buffer.count > 0 && buffer.count + recordSize > bufferCapacity { try makeRoom() }
        let offset = size
        buffer.append(size: recordSize) { out in
            RecordCodec.encode(header, key: key, into: out) { stored in
                sealer.seal(plaintext, into: stored, record: out, keyLength: key.count)
            }
        }
        hints.add(header, offset: Int(offset), key: key, accessTime: accessTime)
        size += Int64(recordSize)
        return offset
    }

    /// Copies an already encoded record (`record`, whose header is `header`) to the end of the
    /// segment and returns its offset (compaction output).
    mutating func appendEncoded(_ record: UnsafeRawBufferPointer, header: RecordHeader, accessTime: Int64) throws(CaskError) -> Int64 {
        if buffer.count > 0 && buffer.count + record.count > bufferCapacity { try makeRoom() }
        let offset = size
        buffer.append(size: record.count) { $0.copyMemory(from: record) }
        let key = UnsafeRawBufferPointer(rebasing: record[Format.recordHeaderSize..<(Format.recordHeaderSize + header.keyLength)])
        hints.add(header, offset: Int(offset), key: key, accessTime: accessTime)
        size += Int64(record.count)
        return offset
    }

    /// Forgets the records appended at or after `offset` (a failed durable write).
    mutating func undo(to offset: Int64) {
        if offset < bufferStart { dropHandoff(keepingUpTo: offset) }
        if offset >= flushedSize {
            buffer.count = Int(offset - bufferStart)
        } else {
            buffer.reset()
            flushedSize = offset
            syncedSize = min(syncedSize, offset)
            needsTruncate = true
        }
        size = offset
        hints.removeRecords(from: Int(offset))
    }

    /// The bytes `offset ..< offset + count` when they are still in memory (handed off or
    /// buffered); nil when they were written.
    func bufferedBytes(at offset: Int64, count: Int) throws(CaskError) -> [UInt8]? {
        guard offset >= flushedSize else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(count)
        var at = offset
        if let h = handoff, at < h.end {
            let n = min(count, Int(h.end - at))
            try h.buffer.withBytes { bytes throws(CaskError) in out.append(contentsOf: bytes[Int(at - h.start)..<(Int(at - h.start) + n)]) }
            at += Int64(n)
        }
        let rest = count - out.count
        if rest > 0 {
            let start = Int(at - bufferStart)
            try buffer.withBytes { bytes throws(CaskError) in out.append(contentsOf: bytes[start..<(start + rest)]) }
        }
        return out
    }

    // MARK: Flushing and syncing

    /// Hands the write buffer to the OS with as few `write(2)` calls as it takes. On failure the
    /// buffer is kept and any partial write is cut off before the next attempt.
    mutating func flush() throws(CaskError) {
        try openGate()
        try settleHandoff()
        if needsTruncate {
            try fs.truncate(file.handle, to: flushedSize)
            needsTruncate = false
        }
        guard buffer.count > 0 else { return }
        let fs = self.fs, handle = file.handle
        do throws(CaskError) {
            try buffer.withBytes { bytes throws(CaskError) in try fs.appendAll(handle, bytes) }
        } catch {
            needsTruncate = true
            throw error
        }
        flushedSize = size
        buffer.reset()
        startWritebackOfFlushedBytes()
    }

    /// Bytes handed to the OS and not yet asked to be written back (``startWritebackOfFlushedBytes()``).
    private var writebackStart: Int64 = 0
    /// Flushed bytes whose writeback the flush thread asks for outside the lock (``takeWritebackDue()``).
    private(set) var writebackDue: Range<Int64>?
    /// How many flushed bytes make the writer ask for their writeback: 8 MiB.
    static let writebackChunk: Int64 = 8 << 20

    /// Once 8 MiB are flushed and not yet synced, asks the OS to start writing them to the
    /// device (format-spec.md, "Writing protocol"): the `fdatasync` at rollover or at a sync
    /// then waits only for what is left, instead of for the whole segment (about 37 ms per
    /// 64 MiB on the project's VM). Durability does not change: only a sync makes bytes durable.
    /// The request can wait for the device's queue, so the active segment's (written under
    /// the store's lock) is only noted here and made by the flush thread outside the lock; a
    /// compaction output's, written without the store's lock, is made at once.
    mutating func startWritebackOfFlushedBytes() {
        writebackStart = max(writebackStart, syncedSize)
        guard flushedSize - writebackStart >= Self.writebackChunk else { return }
        if writesBehind {
            writebackDue = min(writebackDue?.lowerBound ?? writebackStart, writebackStart)..<flushedSize
        } else {
            fs.startWriteback(file.handle, offset: writebackStart, count: flushedSize - writebackStart)
        }
        writebackStart = flushedSize
    }

    /// The noted writeback request, for the flush thread to make outside the lock.
    mutating func takeWritebackDue() -> (file: SegmentFile, range: Range<Int64>)? {
        guard let due = writebackDue else { return nil }
        writebackDue = nil
        return (file, due)
    }

    /// Flushes and `fdatasync`s the segment; returns false when there was nothing to sync. A
    /// failed fsync is never retried and trusted: the segment is marked for rollover.
    @discardableResult
    mutating func sync() throws(CaskError) -> Bool {
        try flush()
        guard syncedSize < flushedSize else { return false }
        do throws(CaskError) { try fs.sync(file.handle) } catch {
            needsRollover = true
            throw error
        }
        syncedSize = flushedSize
        return true
    }

    /// Records that an fsync made outside the lock (the group commit's) covered `offset` bytes.
    mutating func markSynced(through offset: Int64) {
        if syncedSize < offset { syncedSize = min(offset, flushedSize) }
    }

    // MARK: Hints

    /// Whether ``hintFile(accessTime:)`` lists every record of the segment.
    var hasCompleteHints: Bool { hints.isComplete }

    /// The complete hint file of the segment as written so far (when ``hasCompleteHints``).
    /// `accessTime(key, offset)` may supply newer access times than the ones recorded at append.
    func hintFile(accessTime: ((UnsafeRawBufferPointer, Int) -> Int64?)? = nil) -> [UInt8] {
        hints.encoded(segmentID: id, segmentSize: size, accessTime: accessTime)
    }
}
