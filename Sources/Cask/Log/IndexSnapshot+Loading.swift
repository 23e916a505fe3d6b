import CaskFormat

extension IndexSnapshot {
    /// The index saved in `directory`'s snapshot, when the snapshot is complete (its checksum
    /// and end magic hold) and describes exactly `segments` (the same ids, sizes and tail
    /// checksums, in id order). Nil otherwise: a missing, stale, torn or foreign snapshot is
    /// never an error, open then loads the hint files (format-spec.md, "Index snapshot").
    static func load(from directory: String, segments: [(file: SegmentFile, size: Int64)], fs: any CaskFileSystem) -> Restored? {
        guard let handle = try? fs.open(FileNames.join(directory, fileName), mode: .read) else { return nil }
        defer { fs.close(handle) }
        guard let header = readHeader(handle, fs: fs), header.segments == segments.count,
              let marks = readMarks(handle, count: header.segments, fs: fs),
              matches(marks, segments, fs: fs),
              let bytes = try? fs.readWholeFile(handle), bytes.count == header.fileSize else { return nil }
        return bytes.withUnsafeBytes { raw in
            guard isComplete(raw) else { return nil }
            return decode(raw, header: header, marks: marks)
        }
    }

    private static func readHeader(_ handle: CaskFileHandle, fs: any CaskFileSystem) -> Header? {
        var bytes = [UInt8](repeating: 0, count: headerSize)
        guard (try? bytes.withMutableBytes { raw throws(CaskError) in try fs.readExactly(handle, into: raw, at: 0) }) == true else { return nil }
        return bytes.withUnsafeBytes { raw -> Header? in
            guard raw.prefix(8).elementsEqual(magic), raw.u32(8) == version else { return nil }
            // Counts are believed only as far as a file size can hold them (no overflow below).
            let entries = raw.u64(16), keyBytes = raw.u64(24)
            guard entries < 1 << 32, keyBytes < 1 << 42 else { return nil }
            return Header(segments: Int(raw.u32(12)), entries: Int(entries), keyBytes: Int(keyBytes),
                          pins: Int(raw.u32(32)), pinKeyBytes: Int(raw.u32(36)), maximumSequence: raw.u64(40))
        }
    }

    private static func readMarks(_ handle: CaskFileHandle, count: Int, fs: any CaskFileSystem) -> [SegmentMark]? {
        var bytes = [UInt8](repeating: 0, count: count * markSize)
        guard (try? bytes.withMutableBytes { raw throws(CaskError) in try fs.readExactly(handle, into: raw, at: Int64(headerSize)) }) == true else { return nil }
        return bytes.withUnsafeBytes { raw in
            (0..<count).map { n in
                let at = n * markSize
                return SegmentMark(id: raw.u32(at), size: Int64(bitPattern: raw.u64(at + 8)), tailChecksum: raw.u32(at + 4))
            }
        }
    }

    /// Whether the directory's segments are the ones the snapshot describes.
    private static func matches(_ marks: [SegmentMark], _ segments: [(file: SegmentFile, size: Int64)], fs: any CaskFileSystem) -> Bool {
        for (m, s) in zip(marks, segments) {
            guard m.id == s.file.id, m.size == s.size,
                  (try? tailChecksum(of: s.file.handle, size: s.size, fs: fs)) == m.tailChecksum else { return false }
        }
        return true
    }

    /// The trailer holds the checksum of everything before it and the end magic.
    private static func isComplete(_ raw: UnsafeRawBufferPointer) -> Bool {
        let end = raw.count - trailerSize
        let body = UnsafeRawBufferPointer(rebasing: raw[..<end])
        return raw.u32(end + 4) == endMagic && raw.u32(end) == CRC32C.mask(CRC32C.checksum(body))
    }

    /// The entries, keys and pins, each checked against the segments it names (a checksummed
    /// file can still come from a faulty writer: nothing it says may point outside a segment).
    private static func decode(_ raw: UnsafeRawBufferPointer, header: Header, marks: [SegmentMark]) -> Restored? {
        var sizes: [UInt32: Int64] = [:]
        for m in marks { sizes[m.id] = m.size }
        var entries = ContiguousArray<IndexEntry>()
        entries.reserveCapacity(header.entries)
        var at = headerSize + marks.count * markSize
        for _ in 0..<header.entries {
            guard let e = decodeEntry(raw, at: at), let size = sizes[e.segment],
                  Int64(e.offset) + Int64(e.recordSize) <= size else { return nil }
            entries.append(e)
            at += entrySize
        }
        let keys = [UInt8](UnsafeRawBufferPointer(rebasing: raw[at..<(at + header.keyBytes)]))
        at += header.keyBytes
        guard let index = KeyIndex(restoring: entries, keys: keys),
              let pins = decodePins(raw, at: at, count: header.pins, sizes: sizes) else { return nil }
        return Restored(index: index, pins: pins, maximumSequence: header.maximumSequence)
    }

    @inline(__always)
    private static func decodeEntry(_ raw: UnsafeRawBufferPointer, at: Int) -> IndexEntry? {
        let keyLength = raw.u16(at + 44), flags = raw.u8(at + 46)
        guard Int(keyLength) <= Format.maximumKeyLength, flags & ~Format.RecordFlag.known == 0 else { return nil }
        return IndexEntry(
            segment: raw.u32(at + 8), offset: raw.u32(at + 12), storedLength: raw.u32(at + 16),
            originalLength: raw.u32(at + 20), sequence: raw.u64(at), writeTime: Int64(raw.u32(at + 40)) * 1000,
            expiry: raw.i64(at + 24), accessTime: raw.i64(at + 32), flags: flags, keyLength: keyLength)
    }

    private static func decodePins(_ raw: UnsafeRawBufferPointer, at start: Int, count: Int,
                                   sizes: [UInt32: Int64]) -> [[UInt8]: PinRecordLocation]? {
        var pins: [[UInt8]: PinRecordLocation] = [:]
        var at = start
        for _ in 0..<count {
            guard at + pinSize <= raw.count - trailerSize else { return nil }
            let keyLength = Int(raw.u16(at + 28))
            let p = PinRecordLocation(segment: raw.u32(at), offset: raw.u32(at + 4), size: Int(raw.u32(at + 24)),
                                      sequence: raw.u64(at + 8), target: raw.u64(at + 16))
            at += pinSize
            guard let size = sizes[p.segment], Int64(p.offset) + Int64(p.size) <= size,
                  at + keyLength <= raw.count - trailerSize else { return nil }
            pins[Array(UnsafeRawBufferPointer(rebasing: raw[at..<(at + keyLength)]))] = p
            at += keyLength
        }
        return at == raw.count - trailerSize ? pins : nil
    }
}
