import CaskFormat

/// The hint entries of the segment being written, collected as records are appended, so that
/// sealing a segment never has to read it back.
struct HintBuilder: Sendable {
    /// The entries so far, in format version 3's encoding: the full parts of about 1 MiB, then
    /// `body`, the part being filled. An entry never straddles two parts, and adding one never
    /// copies the entries before it (a doubling copy of a 20 MB body was a 4 ms put under the
    /// store's lock).
    private var parts: [[UInt8]] = []
    private var body: [UInt8] = []
    /// Bytes in a part, at most.
    private static let partSize = 1 << 20
    /// Bytes of one entry, at most (a descriptor, six varints and the longest key).
    private static let maximumEntrySize = 1 + 6 * 10 + Format.maximumKeyLength
    private(set) var count = 0
    private var encoder = HintEntryEncoder()
    /// Where the first entry's record lies in the segment; the others follow it without gaps.
    private var firstOffset: Int?
    /// Where the next entry's record starts (the end of the last one).
    private var endOffset = 0
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
    /// Nil also when its records do not tile the segment from its header on (a version-1 or
    /// version-2 hint need not say so): the entries could not be coded by their order alone.
    init?(hintFile bytes: [UInt8], segmentID: UInt32, segmentSize: Int64) {
        var builder = HintBuilder()
        builder.endOffset = Format.segmentHeaderSize
        var tiles = true
        let failure = bytes.withUnsafeBytes { raw in
            HintFile.parse(raw, segmentID: UInt64(segmentID), segmentSize: UInt64(segmentSize)) { e, key in
                tiles = tiles && Int(e.offset) == builder.endOffset
                if tiles { builder.add(e, key: key) }
            }
        }
        guard failure == nil, tiles, Int64(builder.endOffset) == segmentSize else { return nil }
        self = builder
    }

    mutating func add(_ header: RecordHeader, offset: Int, key: UnsafeRawBufferPointer, accessTime: Int64? = nil) {
        add(HintEntry(
            sequence: header.sequence, offset: UInt64(offset), writeTime: header.writeTime, expiry: header.expiry,
            accessTime: accessTime ?? header.writeTime, kind: header.kind, flags: header.flags, keyLength: header.keyLength,
            storedLength: header.storedLength, originalLength: header.originalLength), key: key)
    }

    /// Appends an entry whose record starts where the previous one's ends.
    private mutating func add(_ e: HintEntry, key: UnsafeRawBufferPointer) {
        if firstOffset == nil { firstOffset = Int(e.offset) }
        if body.count + Self.maximumEntrySize > Self.partSize {
            parts.append(body)
            body = []
            body.reserveCapacity(Self.partSize)
        }
        encoder.append(e, key: key, to: &body)
        endOffset = Int(e.offset) + e.recordSize
        count += 1
    }

    /// Calls `body` with every entry (its record's offset filled in) and key, in order.
    private func forEach(_ body: (HintEntry, UnsafeRawBufferPointer) -> Void) {
        guard let firstOffset else { return }
        var decoder = HintEntryDecoder(firstOffset: UInt64(firstOffset))
        for part in parts + [self.body] {
            part.withUnsafeBytes { raw in
                var o = 0
                while o < raw.count, let (e, key, next) = decoder.next(raw, at: o, segmentSize: UInt64(endOffset)) {
                    body(e, UnsafeRawBufferPointer(rebasing: raw[key]))
                    o = next
                }
            }
        }
    }

    /// The entries re-encoded, each passed through `change` (which may also drop it).
    private func rebuilt(_ change: (inout HintEntry, UnsafeRawBufferPointer) -> Bool) -> HintBuilder {
        var rebuilt = HintBuilder()
        rebuilt.isComplete = isComplete
        forEach { e, key in
            var e = e
            if change(&e, key) { rebuilt.add(e, key: key) }
        }
        return rebuilt
    }

    /// Forgets the entries of records at or after `offset` (records undone after a failed
    /// write). Rare: the entries are re-encoded.
    mutating func removeRecords(from offset: Int) {
        guard count > 0, offset < endOffset else { return }
        self = rebuilt { e, _ in Int(e.offset) < offset }
    }

    /// The complete hint file for a segment of `segmentSize` bytes. `accessTime(key, offset)`
    /// may supply newer access times than the write times recorded so far.
    func encoded(segmentID: UInt32, segmentSize: Int64, accessTime: ((UnsafeRawBufferPointer, Int) -> Int64?)? = nil) -> [UInt8] {
        let source = accessTime.map { accessTime in
            rebuilt { e, key in
                if let t = accessTime(key, Int(e.offset)) { e.accessTime = t }
                return true
            }
        } ?? self
        return HintFile.encode(segmentID: UInt64(segmentID), segmentSize: UInt64(segmentSize), entryCount: count,
                               bodyParts: source.parts + [source.body])
    }
}

/// A sealed segment's hint file, waiting for the background hint writer: the entries its writer
/// collected, encoded into the file there (off the store's lock), or nil when the writer did not
/// see every record of the segment and the hint must be made by scanning it.
struct PendingHint: Sendable {
    let segment: UInt32
    let entries: HintBuilder?
    /// Bytes of the sealed segment.
    let segmentSize: Int64
    /// The sync the segment still owes after a background seal: its hint is written only once
    /// the segment is durable.
    var after: PredecessorSync? = nil
    /// The segment to scan for the hint when there are no `entries` (a segment the open found
    /// without one). Held until the hint is written: if compaction drops the segment meanwhile,
    /// the hint written is removed again.
    var scanned: SegmentFile? = nil

    /// The hint file's bytes, or nil when the segment must be scanned instead.
    func encoded() -> [UInt8]? {
        entries.map { $0.encoded(segmentID: segment, segmentSize: segmentSize) }
    }
}
