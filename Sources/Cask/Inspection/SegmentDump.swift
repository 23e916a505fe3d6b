import CaskFormat

/// One record as it lies in a segment file (for `cask dump`).
public struct DumpedRecord: Sendable, Codable, Equatable {
    public var offset: Int
    public var size: Int
    public var sequence: UInt64
    public var kind: String
    public var compressed: Bool
    public var pinned: Bool
    public var key: String
    public var storedLength: Int
    public var originalLength: Int
    /// Milliseconds since the Unix epoch.
    public var writeTime: Int64
    /// Milliseconds since the Unix epoch; nil = never (and for pin records).
    public var expiryTime: Int64?
    /// Pin records only: the sequence number of the value record whose pin they set (then
    /// `pinned` is the state they set).
    public var pinTarget: UInt64? = nil
    /// Whether the value is a cache entry with a stale window (its value starts with an entry
    /// header, format-spec.md "Entry header"; `originalLength` includes it).
    public var isEntry: Bool = false
    /// Whether the record is tagged (format version 6): a cache entry whose header lists tags,
    /// or a removal of a tag (its `key` is the tag, not a prefix).
    public var isTagged: Bool = false
    /// Sealed records only (format version 7: values and pin records of a store with encryption
    /// on): the id of the key the stored value names (``StoreEncryption/keyID(of:)``). The dump
    /// reads it from the stored value; it does not check the seal (`cask verify` does).
    public var sealedKeyID: UInt32? = nil
}

/// The decoded content of one segment file, damage included.
public struct SegmentDump: Sendable {
    /// Bytes of a segment header.
    public static var headerSize: Int { Format.segmentHeaderSize }
    /// The header's fields, or nil when it is damaged.
    public var header: (id: UInt64, kind: String, clearsOlder: Bool, minimumSequence: UInt64, sequenceLimit: UInt64)?
    public var records: [DumpedRecord]
    /// Byte ranges holding no valid record.
    public var damage: [(start: Int, end: Int, reason: String)]

    /// Reads segment `id` of the store in `directory` without changing anything.
    public static func read(directory: String, segment id: UInt32, fileSystem: any CaskFileSystem = POSIXFileSystem()) throws(CaskError) -> SegmentDump {
        let path = FileNames.join(directory, FileNames.segment(id))
        _ = try StorePermissionCheck.refuseWritableByOthers(directory, fs: fileSystem)
        let handle = try fileSystem.open(path, mode: .read)
        defer { fileSystem.close(handle) }
        let bytes = try fileSystem.readWholeFile(handle)
        var records: [DumpedRecord] = []
        let summary = try bytes.withBytes { raw throws(CaskError) in
            try SegmentScanner.scan(raw, file: path) { h, offset in
                let key = String(decoding: raw[(offset + Format.recordHeaderSize)..<(offset + Format.recordHeaderSize + h.keyLength)], as: UTF8.self)
                let kind: String
                switch h.kind {
                case .value: kind = "value"
                case .tombstone: kind = "tombstone"
                case .pin: kind = "pin"
                case .removal: kind = "removal"   // its key is the prefix (or, tagged, the tag) it removes
                }
                records.append(DumpedRecord(
                    offset: offset, size: h.encodedSize, sequence: h.sequence, kind: kind,
                    compressed: h.isCompressed, pinned: h.isPinned, key: key, storedLength: h.storedLength,
                    originalLength: h.originalLength, writeTime: h.writeTime,
                    expiryTime: h.isPin || h.expiry == 0 ? nil : h.expiry, pinTarget: h.isPin ? h.pinTarget : nil,
                    isEntry: h.isEntry, isTagged: h.isTagged, sealedKeyID: Self.sealedKeyID(h, in: raw, at: offset)))
            }
        }
        return SegmentDump(
            header: summary.header.map { ($0.id, $0.kind == .log ? "log" : "compacted", $0.clearsOlder, $0.minimumSequence, $0.sequenceLimit) },
            records: records, damage: summary.damage.map { ($0.start, $0.end, $0.reason) })
    }

    /// The key id a sealed record's stored value starts with; nil for other records.
    private static func sealedKeyID(_ h: RecordHeader, in raw: UnsafeRawBufferPointer, at offset: Int) -> UInt32? {
        guard h.isSealed, h.storedLength >= Format.Seal.overhead else { return nil }
        return raw.u32(offset + Format.recordHeaderSize + h.keyLength)
    }
}
