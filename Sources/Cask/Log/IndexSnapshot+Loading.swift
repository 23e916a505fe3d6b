import CaskFormat
import Dispatch

extension IndexSnapshot {
    /// The index saved in `directory`'s snapshot, when the snapshot is complete (its checksum
    /// and end magic hold) and describes exactly `segments` (the same ids, sizes and tail
    /// checksums, in id order). Nil otherwise: a missing, stale, torn or foreign snapshot is
    /// never an error, open then loads the hint files (format-spec.md, "Index snapshot").
    /// Each section is read straight into the array that keeps it; nothing is allocated
    /// before the header's counts agree with the file's size.
    /// - Throws: ``CaskError/io(operation:path:errno:)`` when a read of the snapshot or of a
    ///   segment's tail fails: a failed read is never taken for a stale snapshot or for damage
    ///   (format-spec.md, "A failed read is never damage"), and nothing has changed.
    /// With `keyring` (encryption on) the snapshot is used only when its seal holds for every
    /// section (format-spec.md, "File seals"), and not at all when a segment's tail changed.
    static func load(from directory: String, segments: [(file: SegmentFile, size: Int64)], fs: any CaskFileSystem,
                     keyring: Keyring?) throws(CaskError) -> Restored? {
        guard let handle = try fs.openIfPresent(FileNames.join(directory, fileName)) else { return nil }
        defer { fs.close(handle) }
        var seal: Seal?
        if let keyring {
            guard let found = try Seal.read(handle, fs: fs, keyring: keyring) else { return nil }
            seal = found
        }
        var input = SnapshotInput(handle: handle, fs: fs)
        input.mac = seal?.sealer.stream(section: 0)
        guard let header = try input.header(), header.segments == segments.count,
              try fs.size(handle) == Int64(header.fileSize + (seal == nil ? 0 : Seal.size)),
              let marks = try input.marks(count: header.segments), seal?.holds(section: 0, input.mac) ?? true,
              let changed = try changedTails(marks, segments, fs: fs), changed.isEmpty || keyring == nil,
              let s = try readSections(header, marks: marks, after: input, seal: seal),
              // The parts are a temporary: the index holds them alone (a change copies nothing).
              let index = s.takeIndexParts().flatMap({ KeyIndex(restoring: $0.entries, expiries: $0.expiries, keys: $0.keys, slots: s.slots, seed: header.seed) }),
              let pins = decodePins(s.pinBytes, count: header.pins, in: marks) else { return nil }
        var restored = Restored(index: index, pins: pins, maximumSequence: header.maximumSequence)
        if !changed.isEmpty {
            guard try checkChangedTails(&restored, changed: changed, segments: segments) else { return nil }
        }
        return restored
    }

    /// The sections after the segment marks, read on two threads at once (the entries, decoded
    /// and checked, on this one; the slots, keys and pin records beside it), so that reading
    /// the file overlaps decoding it; nil unless every read completes and the trailer holds the
    /// checksum of the whole file (the parts' checksums combined, in file order). Throws the
    /// first failed read of either thread.
    private static func readSections(_ header: Header, marks: [SegmentMark], after prefix: SnapshotInput, seal: Seal?) throws(CaskError) -> SectionReads? {
        let lengths = header.sectionLengths
        let (slotsLength, entriesLength, restLength) = (lengths[1], lengths[2], lengths[3])
        let slotsAt = prefix.position, entriesAt = slotsAt + Int64(slotsLength)
        let restAt = entriesAt + Int64(entriesLength), trailerAt = restAt + Int64(restLength)
        let reads = SectionReads()
        let (handle, fs) = (prefix.handle, prefix.fs)
        DispatchQueue.concurrentPerform(iterations: 2) { part in
            do throws(CaskError) {
                if part == 0 {
                    var input = SnapshotInput(handle: handle, fs: fs, at: entriesAt)
                    input.mac = seal?.sealer.stream(section: 2)
                    reads.entryResult = try input.entries(count: header.entries, in: marks)
                    reads.entryChecksum = input.checksum
                    reads.entrySealHolds = seal?.holds(section: 2, input.mac) ?? true
                } else {
                    var input = SnapshotInput(handle: handle, fs: fs, at: slotsAt)
                    input.mac = seal?.sealer.stream(section: 1)
                    reads.slotResult = try input.slots(count: header.slots)
                    reads.slotChecksum = input.checksum
                    var rest = SnapshotInput(handle: handle, fs: fs, at: restAt)
                    rest.mac = seal?.sealer.stream(section: 3)
                    reads.keyResult = try rest.chunkedBytes(count: header.keyBytes)
                    reads.pinResult = try rest.bytes(count: header.pins * pinSize + header.pinKeyBytes)
                    reads.restChecksum = rest.checksum
                    reads.restSealHolds = (seal?.holds(section: 1, input.mac) ?? true) && (seal?.holds(section: 3, rest.mac) ?? true)
                }
            } catch {
                reads.failures[part] = error
            }
        }
        if let failure = reads.failures[0] ?? reads.failures[1] { throw failure }
        var whole = prefix.checksum
        for (sum, length) in [(reads.slotChecksum, slotsLength), (reads.entryChecksum, entriesLength), (reads.restChecksum, restLength)] {
            whole = CRC32C.combine(whole, sum, secondLength: length)
        }
        var trailer = SnapshotInput(handle: prefix.handle, fs: prefix.fs, at: trailerAt)
        guard reads.isComplete, reads.entrySealHolds, reads.restSealHolds, try trailer.trailerHolds(checksum: whole) else { return nil }
        return reads
    }

    /// Nil unless the segments are the ones the snapshot describes (same ids and sizes, in
    /// order); then the ids of those whose last bytes changed since (damage: the rest of a
    /// segment is checked record by record on read, as always). A tail that cannot be read
    /// throws: it is not a changed one.
    private static func changedTails(_ marks: [SegmentMark], _ segments: [(file: SegmentFile, size: Int64)], fs: any CaskFileSystem) throws(CaskError) -> [UInt32: Int64]? {
        var changed: [UInt32: Int64] = [:]
        for (m, s) in zip(marks, segments) {
            guard m.id == s.file.id, m.size == s.size else { return nil }
            // Nil only when the file ended before `size`: it is not the segment the snapshot saw.
            guard let tail = try tailChecksum(of: s.file.handle, size: s.size, fs: fs) else { return nil }
            if tail != m.tailChecksum { changed[m.id] = m.size }
        }
        return changed
    }

    /// Reads every entry's record that lies in a changed tail. A record that fails its checksum
    /// is damage: its key leaves the index (listed in `damagedKeys`, for a tombstone). A record
    /// that is intact but not the entry's (another key or sequence), or a file that ends before
    /// the record, means the segment is not the one the snapshot saw: false, and the snapshot is
    /// not used. A read that fails throws before anything is removed: only bytes that were read
    /// and fail their checksum are damage.
    private static func checkChangedTails(_ restored: inout Restored, changed: [UInt32: Int64], segments: [(file: SegmentFile, size: Int64)]) throws(CaskError) -> Bool {
        var files: [UInt32: SegmentFile] = [:]
        for s in segments where changed[s.file.id] != nil { files[s.file.id] = s.file }
        var damaged: [(key: [UInt8], file: String, offset: UInt32)] = []
        var foreign = false
        var failure: CaskError?
        restored.index.forEachEntry { key, e in
            guard failure == nil, let size = changed[e.segment], Int64(e.offset) + Int64(e.recordSize) > size - Int64(tailLength),
                  let file = files[e.segment] else { return }
            var bytes = [UInt8](repeating: 0, count: e.recordSize)
            do throws(CaskError) {
                let complete = try bytes.withMutableBytes { raw throws(CaskError) in
                    try file.fileSystem.readExactly(file.handle, into: raw, at: Int64(e.offset)) }
                guard complete else { foreign = true; return }
            } catch {
                failure = error
                return
            }
            guard case .record(let h) = bytes.withUnsafeBytes({ RecordCodec.decode($0, at: 0) }) else {
                damaged.append((Array(key), file.path, e.offset))
                return
            }
            let sameKey = bytes.withUnsafeBytes { key.elementsEqual(UnsafeRawBufferPointer(rebasing: $0[Format.recordHeaderSize..<(Format.recordHeaderSize + min(h.keyLength, e.recordSize - Format.recordHeaderSize))])) }
            if h.sequence != e.sequence || !sameKey { foreign = true }
        }
        if let failure { throw failure }
        guard !foreign else { return false }
        for d in damaged { d.key.withUnsafeBytes { _ = restored.index.removeValue(forKey: $0) } }
        restored.damagedRecords = damaged.map { DamagedRecord(key: String(decoding: $0.key, as: UTF8.self), file: $0.file, offset: $0.offset) }
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

/// What ``IndexSnapshot/readSections(_:marks:after:)`` read: each part written by one of its
/// two threads, read by the caller after both have ended.
// @unchecked: each property is written by one thread, and read only after concurrentPerform
// returns (which orders the writes before the reads).
private final class SectionReads: @unchecked Sendable {
    var slotResult: [UInt64]?
    var entryResult: (ChunkedArray<StoredIndexEntry>, ChunkedArray<Int64>)?
    var keyResult: ChunkedArray<UInt8>?
    var pinResult: [UInt8]?
    /// A failed read of either thread (index: the part).
    var failures: [CaskError?] = [nil, nil]
    /// Whether the seal holds for the sections each thread read (true without encryption):
    /// the entries; the slots, keys and pin records.
    var entrySealHolds = false
    var restSealHolds = false
    var slotChecksum: UInt32 = 0
    var entryChecksum: UInt32 = 0
    /// Of the keys and the pin records (one run of the file).
    var restChecksum: UInt32 = 0

    var isComplete: Bool { slotResult != nil && entryResult != nil && keyResult != nil && pinResult != nil }
    var slots: [UInt64] { slotResult ?? [] }
    /// The entries, their expiries and the key arena, handed over: this object keeps no
    /// reference to them (a change to the index would otherwise copy them).
    func takeIndexParts() -> (entries: ChunkedArray<StoredIndexEntry>, expiries: ChunkedArray<Int64>, keys: ChunkedArray<UInt8>)? {
        guard let (entries, expiries) = entryResult, let keys = keyResult else { return nil }
        (entryResult, keyResult) = (nil, nil)
        return (entries, expiries, keys)
    }
    var pinBytes: [UInt8] { pinResult ?? [] }
}

extension IndexSnapshot {
    /// The seal at the end of a snapshot of a store with encryption on (format-spec.md, "File
    /// seals"): a GMAC tag for each of its four sections (header and marks, slots, entries,
    /// keys and pin records).
    struct Seal: Sendable {
        static let sections = 4
        static let size = Format.FileSeal.size(sections: sections)
        let sealer: FileSealer
        let tags: [[UInt8]]

        /// The seal that ends the file; nil when there is none or it names a key not in the ring.
        static func read(_ handle: CaskFileHandle, fs: any CaskFileSystem, keyring: Keyring) throws(CaskError) -> Seal? {
            let fileSize = try fs.size(handle)
            guard fileSize >= Int64(size) else { return nil }
            var bytes = [UInt8](repeating: 0, count: size)
            var complete = false
            var failure: CaskError?
            bytes.withUnsafeMutableBytes { raw in
                do throws(CaskError) { complete = try fs.readExactly(handle, into: raw, at: fileSize - Int64(size)) } catch { failure = error }
            }
            if let failure { throw failure }
            guard complete, case .success(let found) = bytes.withUnsafeBytes({ FileSealer.found($0, sections: sections, magic: Format.FileSeal.indexMagic, keyring: keyring) }) else { return nil }
            return Seal(sealer: found.sealer, tags: found.tags)
        }

        /// What is wrong with the seal of `raw`, a whole snapshot file whose header is `header`
        /// (for `cask verify`); nil when it holds for every section.
        static func problem(in raw: UnsafeRawBufferPointer, header: Header, keyring: Keyring) -> String? {
            let found: (sealer: FileSealer, tags: [[UInt8]])
            switch FileSealer.found(raw, sections: sections, magic: Format.FileSeal.indexMagic, keyring: keyring) {
            case .success(let f): found = f
            case .failure(let problem): return problem.reason
            }
            var at = 0
            for (n, length) in header.sectionLengths.enumerated() {
                guard at + length <= raw.count,
                      FileSealer.same(found.sealer.tag(UnsafeRawBufferPointer(rebasing: raw[at..<(at + length)]), section: UInt32(n)), found.tags[n]) else {
                    return "its seal does not hold"
                }
                at += length
            }
            return nil
        }

        /// Whether `mac`, fed section `section` as it was read, ends with that section's tag.
        func holds(section: Int, _ mac: GMACStream?) -> Bool {
            guard let mac else { return false }
            return FileSealer.same(mac.finish(), tags[section])
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
