import CaskFormat
import CCaskSupport

/// Reads an ``IndexSnapshot`` front to back from `position`, section by section, keeping the
/// checksum of every byte it read; each read returns nil when the file ends early (a torn or
/// foreign snapshot) and throws when the read fails (an I/O error, never taken for a torn file).
/// Several inputs may read one handle at once (each from its own position).
struct SnapshotInput {
    let handle: CaskFileHandle
    let fs: any CaskFileSystem
    /// The offset of the next byte to read.
    private(set) var position: Int64
    private var crc: UInt32 = 0
    /// With encryption on: the GMAC of the section this input reads (format-spec.md, "File seals").
    var mac: GMACStream?

    init(handle: CaskFileHandle, fs: any CaskFileSystem, at position: Int64 = 0) {
        self.handle = handle
        self.fs = fs
        self.position = position
    }

    /// The CRC32C of the bytes this input read.
    var checksum: UInt32 { crc }

    /// Fills `buffer` with the next bytes; false when the file ends first.
    private mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(CaskError) -> Bool {
        guard buffer.count > 0 else { return true }
        guard try fs.readExactly(handle, into: buffer, at: position) else { return false }
        crc = CRC32C.checksum(UnsafeRawBufferPointer(buffer), extending: crc)
        mac?.update(UnsafeRawBufferPointer(buffer))
        position += Int64(buffer.count)
        return true
    }

    /// The next `count` bytes, read straight into the array (not zeroed first).
    mutating func bytes(count: Int) throws(CaskError) -> [UInt8]? {
        // An empty array is Swift's shared empty storage: filling it would write its count there,
        // a race (harmless, but reported by TSan) when two threads read empty sections at once.
        guard count > 0 else { return [] }
        var complete = false
        var failure: CaskError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            cask_advise_huge_pages(buffer.baseAddress, count)
            do throws(CaskError) { complete = try read(into: UnsafeMutableRawBufferPointer(buffer)) } catch { failure = error }
            initialized = count   // bytes: any content is a valid value, and a short read returns nil below
        }
        if let failure { throw failure }
        return complete ? bytes : nil
    }

    /// The next `count` bytes, read straight into the first chunk of a ``ChunkedArray`` (for
    /// the key arena).
    mutating func chunkedBytes(count: Int) throws(CaskError) -> ChunkedArray<UInt8>? {
        var complete = false
        let bytes = try ChunkedArray<UInt8>(unsafeUninitializedCount: count, chunkShift: KeyArena.chunkShift) { buffer throws(CaskError) in
            cask_advise_huge_pages(buffer.baseAddress, count)
            complete = try read(into: UnsafeMutableRawBufferPointer(buffer))   // any bytes are valid; a short read returns nil below
        }
        return complete ? bytes : nil
    }

    /// The header, when its magic and version are this build's and its counts are small
    /// enough for the size arithmetic that follows.
    mutating func header() throws(CaskError) -> IndexSnapshot.Header? {
        guard let b = try bytes(count: IndexSnapshot.headerSize) else { return nil }
        return b.withUnsafeBytes { raw -> IndexSnapshot.Header? in
            guard raw.prefix(8).elementsEqual(IndexSnapshot.magic), raw.u32(8) == IndexSnapshot.version else { return nil }
            let entries = raw.u64(16), keyBytes = raw.u64(24), slots = raw.u64(56)
            guard entries < 1 << 32, keyBytes < 1 << 32, slots < 1 << 32, Format.isPlausibleSequence(raw.u64(40)) else { return nil }
            return IndexSnapshot.Header(segments: Int(raw.u32(12)), entries: Int(entries), keyBytes: Int(keyBytes),
                                        pins: Int(raw.u32(32)), pinKeyBytes: Int(raw.u32(36)),
                                        maximumSequence: raw.u64(40), seed: raw.u64(48), slots: Int(slots))
        }
    }

    mutating func marks(count: Int) throws(CaskError) -> [IndexSnapshot.SegmentMark]? {
        guard let b = try bytes(count: count * IndexSnapshot.markSize) else { return nil }
        return b.withUnsafeBytes { raw in
            (0..<count).map { n in
                let at = n * IndexSnapshot.markSize
                return IndexSnapshot.SegmentMark(id: raw.u32(at), size: Int64(bitPattern: raw.u64(at + 8)), tailChecksum: raw.u32(at + 4))
            }
        }
    }

    /// The hash table's slots, read straight into the array (little-endian on disk).
    mutating func slots(count: Int) throws(CaskError) -> [UInt64]? {
        guard count > 0 else { return [] }   // as in `bytes(count:)`
        var complete = false
        var failure: CaskError?
        var slots = [UInt64](unsafeUninitializedCapacity: count) { buffer, initialized in
            cask_advise_huge_pages(buffer.baseAddress, count * MemoryLayout<UInt64>.stride)
            do throws(CaskError) { complete = try read(into: UnsafeMutableRawBufferPointer(buffer)) } catch { failure = error }
            initialized = count   // integers: any bits are a valid value, and a short read returns nil below
        }
        if let failure { throw failure }
        guard complete else { return nil }
        #if _endian(big)
        for n in slots.indices { slots[n] = UInt64(littleEndian: slots[n]) }
        #endif
        return slots
    }

    /// The entries, decoded 1 MiB of the file at a time, each checked against the segments, with
    /// their key offsets in a key arena that holds the keys one after the other, and their
    /// expiry times (empty when no entry has one). Decoded straight into the first chunk of a
    /// ``ChunkedArray`` of exactly `count` entries.
    mutating func entries(count: Int, in marks: [IndexSnapshot.SegmentMark]) throws(CaskError) -> (ChunkedArray<StoredIndexEntry>, ChunkedArray<Int64>)? {
        var sizes = SegmentSizes(marks)
        var expiries = ChunkedArray<Int64>(chunkShift: KeyIndex.entryChunkShift)
        var keyOffset = 0
        var complete = false
        let perChunk = (1 << 20) / IndexSnapshot.entrySize
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: perChunk * IndexSnapshot.entrySize, alignment: 8)
        defer { chunk.deallocate() }
        let entries = try ChunkedArray<StoredIndexEntry>(unsafeUninitializedCount: count, chunkShift: KeyIndex.entryChunkShift) { buffer throws(CaskError) in
            cask_advise_huge_pages(buffer.baseAddress, count * MemoryLayout<StoredIndexEntry>.stride)
            var initialized = 0   // an incomplete array is dropped unread: nil below
            while initialized < count {
                let n = min(count - initialized, perChunk)
                let part = UnsafeMutableRawBufferPointer(rebasing: chunk[..<(n * IndexSnapshot.entrySize)])
                guard try read(into: part) else { return }
                for i in 0..<n {
                    guard let e = IndexSnapshot.decodeEntry(UnsafeRawBufferPointer(part), at: i * IndexSnapshot.entrySize, sizes: &sizes),
                          keyOffset + Int(e.keyLength) <= Int(UInt32.max) else { return }
                    if e.expiry != 0 && expiries.isEmpty {
                        expiries = ChunkedArray(repeating: 0, count: initialized, chunkShift: KeyIndex.entryChunkShift)
                    }
                    var stored = StoredIndexEntry(e)
                    stored.moveKey(to: UInt32(keyOffset), arena: 0)
                    keyOffset += Int(e.keyLength)
                    (buffer.baseAddress! + initialized).initialize(to: stored)
                    initialized += 1
                    if !expiries.isEmpty || e.expiry != 0 { expiries.append(e.expiry) }
                }
            }
            complete = true
        }
        return complete ? (entries, expiries) : nil
    }

    /// Reads the trailer: whether it holds the masked `checksum` of everything before it, then
    /// the end magic.
    mutating func trailerHolds(checksum: UInt32) throws(CaskError) -> Bool {
        guard let b = try bytes(count: IndexSnapshot.trailerSize) else { return false }
        return b.withUnsafeBytes { $0.u32(0) == CRC32C.mask(checksum) && $0.u32(4) == IndexSnapshot.endMagic }
    }
}
