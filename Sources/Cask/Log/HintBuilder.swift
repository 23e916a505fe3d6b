import CaskFormat

/// The hint entries of the segment being written, collected as records are appended, so that
/// sealing a segment never has to read it back.
struct HintBuilder: Sendable {
    private(set) var body: [UInt8] = []
    private(set) var count = 0
    /// Offsets of each entry's record, for ``removeRecords(from:)``.
    private var recordOffsets: [UInt32] = []
    /// False when the segment held records before this builder started (a segment continued
    /// after an open from the index snapshot, which keeps no hint file for it): the hint is
    /// then made by scanning the sealed segment instead.
    private(set) var isComplete = true

    init() {}

    /// A builder for a segment whose earlier records it does not know.
    static func continuingUnknownRecords() -> HintBuilder {
        var builder = HintBuilder()
        builder.isComplete = false
        return builder
    }

    /// The entries of an existing hint file (nil when it fails any check): for a writer that
    /// continues the segment it describes.
    init?(hintFile bytes: [UInt8], segmentID: UInt32, segmentSize: Int64) {
        var body: [UInt8] = []
        var offsets: [UInt32] = []
        let failure = bytes.withUnsafeBytes { raw in
            HintFile.parse(raw, segmentID: UInt64(segmentID), segmentSize: UInt64(segmentSize)) { e, key in
                HintFile.appendEntry(e, key: key, to: &body)
                offsets.append(UInt32(e.offset))
            }
        }
        guard failure == nil else { return nil }
        self.body = body
        self.count = offsets.count
        self.recordOffsets = offsets
    }

    mutating func add(_ header: RecordHeader, offset: Int, key: UnsafeRawBufferPointer, accessTime: Int64? = nil) {
        HintFile.appendEntry(HintEntry(
            sequence: header.sequence, offset: UInt64(offset), writeTime: header.writeTime, expiry: header.expiry,
            accessTime: accessTime ?? header.writeTime, kind: header.kind, flags: header.flags, keyLength: header.keyLength,
            storedLength: header.storedLength, originalLength: header.originalLength), key: key, to: &body)
        recordOffsets.append(UInt32(offset))
        count += 1
    }

    /// Forgets the entries of records at or after `offset` (records undone after a failed write).
    mutating func removeRecords(from offset: Int) {
        while let last = recordOffsets.last, Int(last) >= offset {
            recordOffsets.removeLast()
            count -= 1
            // Walk to the start of the last entry: entries are re-parsed from the front.
            var o = 0, start = 0
            for _ in 0..<count + 1 {
                start = o
                let keyLength = Int(UInt16(body[o + 42]) | UInt16(body[o + 43]) << 8)
                o += Format.hintEntrySize + keyLength
            }
            body.removeSubrange(start...)
        }
    }

    /// The complete hint file for a segment of `segmentSize` bytes. `accessTime(key, offset)`
    /// may supply newer access times than the write times recorded so far.
    func encoded(segmentID: UInt32, segmentSize: Int64, accessTime: ((UnsafeRawBufferPointer, Int) -> Int64?)? = nil) -> [UInt8] {
        guard let accessTime else {
            return HintFile.encode(segmentID: UInt64(segmentID), segmentSize: UInt64(segmentSize), entryCount: count, body: body)
        }
        var patched = body
        patched.withUnsafeMutableBytes { out in
            var o = 0
            while o < out.count {
                let keyLength = Int(UnsafeRawBufferPointer(out).u16(o + 42))
                let key = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(out)[(o + Format.hintEntrySize)..<(o + Format.hintEntrySize + keyLength)])
                if let t = accessTime(key, Int(UnsafeRawBufferPointer(out).u64(o + 8))) { out.put(t, at: o + 32) }
                o += Format.hintEntrySize + keyLength
            }
        }
        return HintFile.encode(segmentID: UInt64(segmentID), segmentSize: UInt64(segmentSize), entryCount: count, body: patched)
    }
}
