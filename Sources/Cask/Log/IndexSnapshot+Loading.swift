import CaskFormat

extension IndexSnapshot {
    /// The index saved in `directory`'s snapshot, when the snapshot is complete (its checksum
    /// and end magic hold) and describes exactly `segments` (the same ids, sizes and tail
    /// checksums, in id order). Nil otherwise: a missing, stale, torn or foreign snapshot is
    /// never an error, open then loads the hint files (format-spec.md, "Index snapshot").
    /// Each section is read straight into the array that keeps it; nothing is allocated
    /// before the header's counts agree with the file's size.
    static func load(from directory: String, segments: [(file: SegmentFile, size: Int64)], fs: any CaskFileSystem) -> Restored? {
        guard let handle = try? fs.open(FileNames.join(directory, fileName), mode: .read) else { return nil }
        defer { fs.close(handle) }
        var input = SnapshotInput(handle: handle, fs: fs)
        guard let header = input.header(), header.segments == segments.count,
              (try? fs.size(handle)) == Int64(header.fileSize),
              let marks = input.marks(count: header.segments), let changed = changedTails(marks, segments, fs: fs),
              let slots = input.slots(count: header.slots),
              let (entries, expiries) = input.entries(count: header.entries, in: marks),
              let keys = input.bytes(count: header.keyBytes),
              let pinBytes = input.bytes(count: header.pins * pinSize + header.pinKeyBytes),
              input.trailerHolds(),
              let index = KeyIndex(restoring: entries, expiries: expiries, keys: keys, slots: slots, seed: header.seed),
              let pins = decodePins(pinBytes, count: header.pins, in: marks) else { return nil }
        var restored = Restored(index: index, pins: pins, maximumSequence: header.maximumSequence)
        guard changed.isEmpty || checkChangedTails(&restored, changed: changed, segments: segments) else { return nil }
        return restored
    }

    /// Nil unless the segments are the ones the snapshot describes (same ids and sizes, in
    /// order); then the ids of those whose last bytes changed since (damage: the rest of a
    /// segment is checked record by record on read, as always).
    private static func changedTails(_ marks: [SegmentMark], _ segments: [(file: SegmentFile, size: Int64)], fs: any CaskFileSystem) -> [UInt32: Int64]? {
        var changed: [UInt32: Int64] = [:]
        for (m, s) in zip(marks, segments) {
            guard m.id == s.file.id, m.size == s.size else { return nil }
            if (try? tailChecksum(of: s.file.handle, size: s.size, fs: fs)) != m.tailChecksum { changed[m.id] = m.size }
        }
        return changed
    }

    /// Reads every entry's record that lies in a changed tail. A record that fails its checksum
    /// is damage: its key leaves the index (listed in `damagedKeys`, for a tombstone). A record
    /// that is intact but not the entry's (another key or sequence) means the segment is not
    /// the one the snapshot saw: false, and the snapshot is not used.
    private static func checkChangedTails(_ restored: inout Restored, changed: [UInt32: Int64], segments: [(file: SegmentFile, size: Int64)]) -> Bool {
        var files: [UInt32: SegmentFile] = [:]
        for s in segments where changed[s.file.id] != nil { files[s.file.id] = s.file }
        var damaged: [[UInt8]] = []
        var foreign = false
        restored.index.forEachEntry { key, e in
            guard let size = changed[e.segment], Int64(e.offset) + Int64(e.recordSize) > size - Int64(tailLength),
                  let file = files[e.segment] else { return }
            var bytes = [UInt8](repeating: 0, count: e.recordSize)
            let read = (try? bytes.withMutableBytes { raw throws(CaskError) in
                try file.fileSystem.readExactly(file.handle, into: raw, at: Int64(e.offset)) }) ?? false
            guard read, case .record(let h) = bytes.withUnsafeBytes({ RecordCodec.decode($0, at: 0) }) else {
                damaged.append(Array(key))
                return
            }
            let sameKey = bytes.withUnsafeBytes { key.elementsEqual(UnsafeRawBufferPointer(rebasing: $0[Format.recordHeaderSize..<(Format.recordHeaderSize + min(h.keyLength, e.recordSize - Format.recordHeaderSize))])) }
            if h.sequence != e.sequence || !sameKey { foreign = true }
        }
        guard !foreign else { return false }
        for key in damaged { key.withUnsafeBytes { _ = restored.index.removeValue(forKey: $0) } }
        restored.damagedKeys = damaged.map { String(decoding: $0, as: UTF8.self) }
        return true
    }

    /// One entry, checked against the segment it names (a checksummed file can still come from
    /// a faulty writer: nothing it says may point outside a segment).
    @inline(__always)
    static func decodeEntry(_ raw: UnsafeRawBufferPointer, at: Int, sizes: inout SegmentSizes) -> IndexEntry? {
        let keyLength = raw.u16(at + 20), flags = raw.u8(at + 22)
        guard Int(keyLength) <= Format.maximumKeyLength, flags & ~Format.RecordFlag.known == 0 else { return nil }
        let e = IndexEntry(
            segment: raw.u32(at + 8), offset: raw.u32(at + 12), storedLength: raw.u32(at + 16), sequence: raw.u64(at),
            expiry: raw.i64(at + 24), accessTime: raw.i64(at + 32), flags: flags, keyLength: keyLength)
        guard let size = sizes.size(of: e.segment), Int64(e.offset) + Int64(e.recordSize) <= size else { return nil }
        return e
    }

    private static func decodePins(_ bytes: [UInt8], count: Int, in marks: [SegmentMark]) -> [[UInt8]: PinRecordLocation]? {
        var sizes: [UInt32: Int64] = [:]
        for m in marks { sizes[m.id] = m.size }
        return bytes.withUnsafeBytes { raw -> [[UInt8]: PinRecordLocation]? in
            var pins: [[UInt8]: PinRecordLocation] = [:]
            var at = 0
            for _ in 0..<count {
                guard at + pinSize <= raw.count else { return nil }
                let keyLength = Int(raw.u16(at + 28))
                let p = PinRecordLocation(segment: raw.u32(at), offset: raw.u32(at + 4), size: Int(raw.u32(at + 24)),
                                          sequence: raw.u64(at + 8), target: raw.u64(at + 16))
                at += pinSize
                guard let size = sizes[p.segment], Int64(p.offset) + Int64(p.size) <= size, at + keyLength <= raw.count else { return nil }
                pins[Array(UnsafeRawBufferPointer(rebasing: raw[at..<(at + keyLength)]))] = p
                at += keyLength
            }
            return at == raw.count ? pins : nil
        }
    }
}

/// Segment sizes by id for checking entries, which come in runs of one segment: the last
/// answer is kept, so a run costs one dictionary lookup, not one per entry.
struct SegmentSizes {
    private var sizes: [UInt32: Int64] = [:]
    private var lastID: UInt32? = nil
    private var lastSize: Int64 = 0

    init(_ marks: [IndexSnapshot.SegmentMark]) {
        for m in marks { sizes[m.id] = m.size }
    }

    @inline(__always)
    mutating func size(of id: UInt32) -> Int64? {
        if id == lastID { return lastSize }
        guard let size = sizes[id] else { return nil }
        (lastID, lastSize) = (id, size)
        return size
    }
}
