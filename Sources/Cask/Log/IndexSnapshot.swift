import CaskFormat

/// The index as it stood at a clean close, in one file (`INDEX`, format-spec.md "Index
/// snapshot"): the segments it describes (id, size, checksum of their last bytes), every entry
/// with its key, the live pin records and the highest sequence number written. Open loads it
/// instead of the hint files when it still describes the directory exactly, and ignores it
/// otherwise; a writer's open deletes it before anything is appended.
///
/// It is never synced: it holds nothing the segments do not (access times aside), so a snapshot
/// lost, emptied or torn by a crash fails its checks and open reads the hint files instead.
/// Access times, which only the index holds, survive a clean close through it without
/// rewriting any hint file.
enum IndexSnapshot {
    static let fileName = "INDEX"
    /// "CASKIDX\0".
    static let magic: [UInt8] = Array("CASKIDX\0".utf8)
    static let version: UInt32 = 2
    static let headerSize = 64
    static let slotSize = 8
    static let markSize = 16
    static let entrySize = 40
    static let pinSize = 32
    static let trailerSize = 8
    /// "IEND": the last four bytes of a complete snapshot.
    static let endMagic: UInt32 = 0x444E_4549
    /// Bytes at the end of each segment covered by its tail checksum.
    static let tailLength = 4096

    /// A segment as the snapshot saw it.
    struct SegmentMark: Equatable {
        var id: UInt32
        var size: Int64
        var tailChecksum: UInt32
    }

    /// The counts a snapshot's header announces.
    struct Header {
        var segments: Int
        var entries: Int
        var keyBytes: Int
        var pins: Int
        var pinKeyBytes: Int
        var maximumSequence: UInt64
        /// The index's hash seed and its table's slot count.
        var seed: UInt64
        var slots: Int

        /// Bytes of the file's four sections, in file order: header and segment marks, slots,
        /// entries, keys and pin records (each checked on its own: checksums, file seals).
        var sectionLengths: [Int] {
            [headerSize + segments * markSize, slots * slotSize, entries * entrySize, keyBytes + pins * pinSize + pinKeyBytes]
        }

        /// Bytes of the whole file these counts make (without a file seal).
        var fileSize: Int { sectionLengths.reduce(trailerSize, +) }
    }

    /// What a valid snapshot restores.
    struct Restored {
        var index: KeyIndex
        var pins: [[UInt8]: PinRecordLocation]
        var maximumSequence: UInt64
        /// Records that lay in a segment tail that changed since the snapshot and no longer
        /// pass their checksum (bitrot): their keys are already out of the index.
        var damagedRecords: [DamagedRecord] = []
        var damagedKeys: [String] { damagedRecords.map(\.key) }
    }

    /// A damaged record found while checking a changed segment tail: its key, file and offset.
    struct DamagedRecord: CustomStringConvertible {
        var key: String
        var file: String
        var offset: UInt32
        var description: String { "key \"\(key)\" at \(file):\(offset)" }
    }

    /// The CRC32C of the last ``tailLength`` bytes (or fewer) of a segment of `size` bytes.
    static func tailChecksum(of handle: CaskFileHandle, size: Int64, fs: any CaskFileSystem) throws(CaskError) -> UInt32? {
        let length = Int(min(size, Int64(tailLength)))
        var bytes = [UInt8](repeating: 0, count: length)
        let complete = try bytes.withMutableBytes { raw throws(CaskError) in try fs.readExactly(handle, into: raw, at: size - Int64(length)) }
        return complete ? bytes.withUnsafeBytes { CRC32C.checksum($0) } : nil
    }
}

// MARK: Writing

extension IndexSnapshot {
    /// Writes the snapshot of `index` over the segments `marks`: a temporary file, renamed over
    /// ``fileName`` (no sync, see the type's documentation). Streams through a 1 MiB buffer.
    /// With `keyring` (encryption on) the snapshot ends with a seal over its four sections
    /// (format-spec.md, "File seals").
    static func write(index: KeyIndex, pins: [[UInt8]: PinRecordLocation], maximumSequence: UInt64,
                      marks: [SegmentMark], in directory: String, fs: any CaskFileSystem, keyring: Keyring?) throws(CaskError) {
        let path = FileNames.join(directory, fileName)
        let temporary = path + FileNames.temporarySuffix
        let handle = try fs.open(temporary, mode: .createTruncate)
        do throws(CaskError) {
            var out = SnapshotOutput(handle: handle, fs: fs, sealer: keyring.map(FileSealer.init))
            let table = index.table
            let header = Header(segments: marks.count, entries: index.count, keyBytes: index.liveKeyBytes,
                                pins: pins.count, pinKeyBytes: pins.keys.reduce(0) { $0 + $1.count },
                                maximumSequence: maximumSequence, seed: table.seed, slots: table.slots.count)
            try out.reserve(headerSize) { encode(header, into: $0) }
            for m in marks { try out.reserve(markSize) { encode(m, into: $0) } }
            try out.beginSection(1)
            try table.slots.withUnsafeBufferPointer { slots throws(CaskError) in
                for start in stride(from: 0, to: slots.count, by: 1 << 16) {
                    let chunk = slots[start..<min(slots.count, start + 1 << 16)]
                    try out.reserve(chunk.count * slotSize) { raw in
                        for (n, slot) in chunk.enumerated() { raw.put(slot, at: n * slotSize) }
                    }
                }
            }
            try out.beginSection(2)
            try index.forEachEntry { _, e throws(CaskError) in try out.reserve(entrySize) { encode(e, into: $0) } }
            try out.beginSection(3)
            try index.forEachEntry { key, _ throws(CaskError) in try out.append(key) }
            for (key, pin) in pins.sorted(by: { $0.value.sequence < $1.value.sequence }) {
                try out.reserve(pinSize) { encode(pin, keyLength: key.count, into: $0) }
                try key.withBytes { raw throws(CaskError) in try out.append(raw) }
            }
            try out.finish()
            fs.close(handle)
        } catch {
            fs.close(handle)
            try? fs.remove(temporary)   // harmless: an unfinished temporary file, removed by the next open too
            throw error
        }
        do throws(CaskError) { try fs.rename(temporary, to: path) } catch {
            try? fs.remove(temporary)
            throw error
        }
    }

    private static func encode(_ h: Header, into raw: UnsafeMutableRawBufferPointer) {
        raw.copyBytes(from: magic)
        raw.put(version, at: 8)
        raw.put(UInt32(h.segments), at: 12)
        raw.put(UInt64(h.entries), at: 16)
        raw.put(UInt64(h.keyBytes), at: 24)
        raw.put(UInt32(h.pins), at: 32)
        raw.put(UInt32(h.pinKeyBytes), at: 36)
        raw.put(h.maximumSequence, at: 40)
        raw.put(h.seed, at: 48)
        raw.put(UInt64(h.slots), at: 56)
    }

    private static func encode(_ m: SegmentMark, into raw: UnsafeMutableRawBufferPointer) {
        raw.put(m.id, at: 0)
        raw.put(m.tailChecksum, at: 4)
        raw.put(UInt64(m.size), at: 8)
    }

    @inline(__always)
    private static func encode(_ e: IndexEntry, into raw: UnsafeMutableRawBufferPointer) {
        raw.put(e.sequence, at: 0)
        raw.put(e.segment, at: 8)
        raw.put(e.offset, at: 12)
        raw.put(e.storedLength, at: 16)
        raw.put(e.keyLength, at: 20)
        raw.put(e.flags & Format.RecordFlag.known, at: 22)
        raw.put(UInt8(0), at: 23)
        raw.put(e.expiry, at: 24)
        raw.put(e.accessTime, at: 32)
    }

    private static func encode(_ p: PinRecordLocation, keyLength: Int, into raw: UnsafeMutableRawBufferPointer) {
        raw.put(p.segment, at: 0)
        raw.put(p.offset, at: 4)
        raw.put(p.sequence, at: 8)
        raw.put(p.target, at: 16)
        raw.put(UInt32(p.size), at: 24)
        raw.put(UInt16(keyLength), at: 28)
        raw.put(UInt16(0), at: 30)
    }
}

/// Buffered, checksummed appends to a new snapshot file; ``finish()`` writes the trailer, and
/// the seal when there is a sealer.
private struct SnapshotOutput {
    let handle: CaskFileHandle
    let fs: any CaskFileSystem
    private var buffer: [UInt8] = []
    private var crc: UInt32 = 0
    private static let capacity = 1 << 20
    private let sealer: FileSealer?
    /// The GMAC of the section being written, and the tags of those before it.
    private var mac: GMACStream?
    private var tags: [[UInt8]] = []

    init(handle: CaskFileHandle, fs: any CaskFileSystem, sealer: FileSealer?) {
        self.handle = handle
        self.fs = fs
        self.sealer = sealer
        mac = sealer?.stream(section: 0)
        buffer.reserveCapacity(Self.capacity)
    }

    /// Ends the section being written (its tag is kept for the seal) and begins section `n`.
    mutating func beginSection(_ n: UInt32) throws(CaskError) {
        guard let sealer else { return }
        try drain()
        if let mac { tags.append(mac.finish()) }
        mac = sealer.stream(section: n)
    }

    /// Appends `count` bytes that `fill` writes in place.
    @inline(__always)
    mutating func reserve(_ count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) throws(CaskError) {
        if buffer.count + count > Self.capacity { try drain() }
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: count))
        buffer.withUnsafeMutableBytes { fill(UnsafeMutableRawBufferPointer(rebasing: $0[start..<(start + count)])) }
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(CaskError) {
        if buffer.count + bytes.count > Self.capacity { try drain() }
        buffer.appendBytes(bytes)
    }

    /// Writes the trailer (checksum of everything before it, end magic), then the seal.
    mutating func finish() throws(CaskError) {
        try drain()
        let sum = crc
        try reserve(IndexSnapshot.trailerSize) { raw in
            raw.put(CRC32C.mask(sum), at: 0)
            raw.put(IndexSnapshot.endMagic, at: 4)
        }
        if let sealer, let mac {
            buffer += sealer.encoded(tags: tags + [mac.finish()], magic: Format.FileSeal.indexMagic)
        }
        try buffer.withBytes { raw throws(CaskError) in try fs.appendAll(handle, raw) }
        buffer.removeAll()
    }

    private mutating func drain() throws(CaskError) {
        guard !buffer.isEmpty else { return }
        crc = buffer.withUnsafeBytes { CRC32C.checksum($0, extending: crc) }
        buffer.withUnsafeBytes { mac?.update($0) }
        try buffer.withBytes { raw throws(CaskError) in try fs.appendAll(handle, raw) }
        buffer.removeAll(keepingCapacity: true)
    }
}
