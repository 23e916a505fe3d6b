/// Walks the records of one segment held in memory, recovering past damage.
///
/// The recovery rules (format-spec.md, "Recovery") are applied by the caller; the scanner only
/// reports what it finds: valid records in file order, and damaged byte ranges. After a record
/// fails its check the scanner never trusts that record's length: it searches forward, one byte
/// at a time, for the next offset where a complete record validates.
struct SegmentScanner {
    /// A byte range that holds no valid record.
    struct Damage: Sendable, Equatable {
        var start: Int
        var end: Int
        var reason: String
        /// The sequence number of the first valid record after the range, when there is one.
        var nextSequence: UInt64?
        /// True when no valid record follows the range (the range runs to the end of the file).
        var reachesEnd: Bool { nextSequence == nil }
    }

    struct Summary: Sendable {
        var header: SegmentHeader?
        /// The header failed its check (records were still scanned from the fixed header size).
        var headerDamaged = false
        var recordCount = 0
        var damage: [Damage] = []
        /// End of the last valid record (or of the header): where a torn tail is cut.
        var validEnd = Format.segmentHeaderSize
        var maximumSequence: UInt64 = 0
    }

    /// Scans `bytes`, calling `visit(header, offset, bytes)` for each valid record in file order.
    /// Throws only when the file is not a Cask segment at all or is of a newer version.
    static func scan(
        _ bytes: UnsafeRawBufferPointer,
        file: String,
        visit: (RecordHeader, Int) -> Void
    ) throws(CaskError) -> Summary {
        var summary = Summary()
        switch SegmentHeader.parse(bytes) {
        case .valid(let h): summary.header = h
        case .newerVersion(let v):
            throw .unsupportedFormatVersion(file: file, found: v, supported: Format.version)
        case .damaged(let magicMatches):
            summary.headerDamaged = true
            if !magicMatches && bytes.count >= Format.segmentHeaderSize && !isAllZero(bytes) {
                // A foreign file unless Cask records follow the header.
                if findNextRecord(bytes, from: Format.segmentHeaderSize) == nil {
                    throw .notACaskStore(file: file)
                }
            }
        }
        var offset = Format.segmentHeaderSize
        if bytes.count < offset {
            summary.validEnd = bytes.count
            return summary
        }
        while offset < bytes.count {
            switch RecordCodec.decode(bytes, at: offset) {
            case .record(let h):
                visit(h, offset)
                summary.recordCount += 1
                summary.maximumSequence = max(summary.maximumSequence, h.sequence)
                offset += h.encodedSize
                summary.validEnd = offset
            case .truncated, .invalid:
                let reason: String
                if case .invalid(let r) = RecordCodec.decode(bytes, at: offset) { reason = r } else { reason = "truncated record" }
                if let (next, h) = findNextRecord(bytes, from: offset + 1) {
                    summary.damage.append(Damage(start: offset, end: next, reason: reason, nextSequence: h.sequence))
                    offset = next
                } else {
                    summary.damage.append(Damage(start: offset, end: bytes.count, reason: reason, nextSequence: nil))
                    offset = bytes.count
                }
            }
        }
        return summary
    }

    /// The first offset at or after `from` where a complete record validates.
    static func findNextRecord(_ bytes: UnsafeRawBufferPointer, from: Int) -> (Int, RecordHeader)? {
        var o = from
        while o + Format.recordHeaderSize <= bytes.count {
            if case .record(let h) = RecordCodec.decode(bytes, at: o) { return (o, h) }
            o += 1
        }
        return nil
    }

    static func isAllZero(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for b in bytes where b != 0 { return false }
        return true
    }
}
