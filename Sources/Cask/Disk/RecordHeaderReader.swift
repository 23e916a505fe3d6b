import CaskFormat

/// Reads the headers of the records the index names, without the store's lock: a value's
/// original length and write time are in its record's header, not in the index. Made under the
/// lock; holds the segment files (a file compaction deletes meanwhile stays readable) and a
/// copy of the records still in the write buffer.
struct RecordHeaderReader {
    private let segments: [UInt32: SegmentFile]
    private let activeID: UInt32
    /// Where the copied bytes of the active segment start and end: records that begin at or
    /// after `flushedSize` are read from the copy.
    private let flushedSize: Int64
    private let copyStart: Int64
    private let copy: [UInt8]

    /// Under the store's lock, for reading any record: the whole write buffer is copied.
    init(everyRecordIn s: StoreState) throws(CaskError) {
        try self.init(s, copyFrom: s.writer.flushedSize, count: Int(s.writer.size - s.writer.flushedSize))
    }

    /// Under the store's lock, for reading the record of `entry` only.
    init(_ s: StoreState, for entry: IndexEntry) throws(CaskError) {
        let inBuffer = entry.segment == s.writer.id && Int64(entry.offset) >= s.writer.flushedSize
        try self.init(s, copyFrom: Int64(entry.offset), count: inBuffer ? Format.recordHeaderSize + Int(entry.keyLength) : 0)
    }

    private init(_ s: StoreState, copyFrom start: Int64, count: Int) throws(CaskError) {
        segments = s.segments
        activeID = s.writer.id
        flushedSize = s.writer.flushedSize
        copyStart = start
        copy = count > 0 ? try s.writer.bufferedBytes(at: start, count: count) ?? [] : []
    }

    /// The header of the value record `entry` names for `key`, or nil when the bytes there are
    /// not that record (damage: the caller reports it). Checks the header's fields, its key and
    /// sequence, not its checksum, which covers the value (a read of the value checks it).
    /// - Throws: ``CaskError/io(operation:path:errno:)`` when the read fails.
    func header(of entry: IndexEntry, key: UnsafeRawBufferPointer) throws(CaskError) -> RecordHeader? {
        let count = Format.recordHeaderSize + Int(entry.keyLength)
        if entry.segment == activeID && Int64(entry.offset) >= flushedSize {
            let start = Int(Int64(entry.offset) - copyStart)
            guard start >= 0, start + count <= copy.count else { return nil }
            return copy.withUnsafeBytes { Self.check(UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)]), entry, key) }
        }
        guard let file = segments[entry.segment] else { return nil }
        if let mapped = file.mappedBytes(at: Int(entry.offset), count: count) { return Self.check(mapped, entry, key) }
        var bytes = [UInt8](repeating: 0, count: count)
        let complete = try bytes.withMutableBytes { raw throws(CaskError) in
            try file.fileSystem.readExactly(file.handle, into: raw, at: Int64(entry.offset))
        }
        return complete ? bytes.withUnsafeBytes { Self.check($0, entry, key) } : nil
    }

    /// The header in `bytes` (header and key), when it is the value record of `entry` and `key`.
    private static func check(_ bytes: UnsafeRawBufferPointer, _ entry: IndexEntry, _ key: UnsafeRawBufferPointer) -> RecordHeader? {
        guard case .record(let h) = RecordCodec.decodeHeader(bytes, at: 0), h.kind == .value, h.sequence == entry.sequence,
              h.storedLength == Int(entry.storedLength), h.keyLength == key.count,
              UnsafeRawBufferPointer(rebasing: bytes[Format.recordHeaderSize...]).elementsEqual(key) else { return nil }
        return h
    }
}
