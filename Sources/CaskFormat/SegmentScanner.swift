/// Walks the records of one segment held in memory, recovering past damage.
///
/// The recovery rules (format-spec.md, "Recovery") are applied by the caller; the scanner only
/// reports what it finds: valid records in file order, and damaged byte ranges. After a record
/// fails its check the scanner never trusts that record's length: it searches forward, one byte
/// at a time, for the next offset where a complete record validates.
package struct SegmentScanner {
    /// A byte range that holds no valid record.
    package struct Damage: Sendable, Equatable {
        package var start: Int
        package var end: Int
        package var reason: String
        /// The sequence number of the first valid record after the range, when there is one.
        package var nextSequence: UInt64?
        /// True when no valid record follows the range (the range runs to the end of the file).
        package var reachesEnd: Bool { nextSequence == nil }
    }

    package struct Summary: Sendable {
        package var header: SegmentHeader?
        /// The header failed its check (records were still scanned from the fixed header size).
        package var headerDamaged = false
        package var recordCount = 0
        package var damage: [Damage] = []
        /// End of the last valid record (or of the header): where a torn tail is cut.
        package var validEnd = Format.segmentHeaderSize
        package var maximumSequence: UInt64 = 0
    }

    /// Why a file cannot be scanned as a segment at all.
    package enum Failure: Error, Equatable {
        /// Neither the header nor any record is Cask's.
        case notASegment
        /// The header is intact and of a newer format version than this build reads.
        case newerVersion(UInt32)
    }

    /// Scans `bytes`, calling `visit(header, offset)` for each valid record in file order.
    /// Throws only when the file is not a Cask segment at all or is of a newer version.
    package static func scan(
        _ bytes: UnsafeRawBufferPointer,
        visit: (RecordHeader, Int) -> Void
    ) throws(Failure) -> Summary {
        var summary = Summary()
        switch SegmentHeader.parse(bytes) {
        case .valid(let h): summary.header = h
        case .newerVersion(let v):
            throw .newerVersion(v)
        case .damaged(let magicMatches):
            summary.headerDamaged = true
            if !magicMatches && bytes.count > Format.segmentHeaderSize && !isAllZero(bytes) {
                // A foreign file unless Cask records follow the header. A file no longer than a
                // header holds no record either way: a segment whose header was damaged
                // (format-spec.md, "Recovery on open", rule 9).
                if findNextRecord(bytes, from: Format.segmentHeaderSize) == nil {
                    throw .notASegment
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
    package static func findNextRecord(_ bytes: UnsafeRawBufferPointer, from: Int) -> (Int, RecordHeader)? {
        var o = from
        while o + Format.recordHeaderSize <= bytes.count {
            if case .record(let h) = RecordCodec.decode(bytes, at: o) { return (o, h) }
            o += 1
        }
        return nil
    }

    package static func isAllZero(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for b in bytes where b != 0 { return false }
        return true
    }
}
