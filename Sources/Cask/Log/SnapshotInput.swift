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
        position += Int64(buffer.count)
        return true
    }

    /// The next `count` bytes, read straight into the array (not zeroed first).
    mutating func bytes(count: Int) throws(CaskError) -> [UInt8]? {
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

    /// The header, when its magic and version are this build's and its counts are small
    /// enough for the size arithmetic that follows.
    mutating func header() throws(CaskError) -> IndexSnapshot.Header? {
        guard let b = try bytes(count: IndexSnapshot.headerSize) else { return nil }
        return b.withUnsafeBytes { raw -> IndexSnapshot.Header? in
            guard raw.prefix(8).elementsEqual(IndexSnapshot.magic), raw.u32(8) == IndexSnapshot.version else { return nil }
            let entries = raw.u64(16), keyBytes = raw.u64(24), slots = raw.u64(56)
            guard entries < 1 << 32, keyBytes < 1 << 32, slots < 1 << 32 else { return nil }
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

    /// The entries, decoded 1 MiB of the file at a time, each checked against the segments, and
    /// their expiry times (empty when no entry has one). Decoded straight into an array of
    /// exactly `count` entries.
    mutating func entries(count: Int, in marks: [IndexSnapshot.SegmentMark]) throws(CaskError) -> (ContiguousArray<StoredIndexEntry>, [Int64])? {
        var sizes = SegmentSizes(marks)
        var expiries: [Int64] = []
        var withExpiries = false
        var complete = false
        var failure: CaskError?
        let perChunk = (1 << 20) / IndexSnapshot.entrySize
        var chunk = [UInt8](repeating: 0, count: perChunk * IndexSnapshot.entrySize)
        let entries = ContiguousArray<StoredIndexEntry>(unsafeUninitializedCapacity: count) { buffer, initialized in
            cask_advise_huge_pages(buffer.baseAddress, count * MemoryLayout<StoredIndexEntry>.stride)
            while initialized < count {
                let n = min(count - initialized, perChunk)
                let ok = chunk.withUnsafeMutableBytes { raw -> Bool in
                    let part = UnsafeMutableRawBufferPointer(rebasing: raw[..<(n * IndexSnapshot.entrySize)])
                    do throws(CaskError) {
                        guard try read(into: part) else { return false }
                    } catch {
                        failure = error
                        return false
                    }
                    for i in 0..<n {
                        guard let e = IndexSnapshot.decodeEntry(UnsafeRawBufferPointer(part), at: i * IndexSnapshot.entrySize, sizes: &sizes) else { return false }
                        if e.expiry != 0 && !withExpiries {
                            withExpiries = true
                            expiries.reserveCapacity(count)
                            expiries.append(contentsOf: repeatElement(0, count: initialized))
                        }
                        (buffer.baseAddress! + initialized).initialize(to: StoredIndexEntry(e))
                        initialized += 1
                        if withExpiries { expiries.append(e.expiry) }
                    }
                    return true
                }
                guard ok else { return }
            }
            complete = true
        }
        if let failure { throw failure }
        return complete ? (entries, expiries) : nil
    }

    /// Reads the trailer: whether it holds the masked `checksum` of everything before it, then
    /// the end magic.
    mutating func trailerHolds(checksum: UInt32) throws(CaskError) -> Bool {
        guard let b = try bytes(count: IndexSnapshot.trailerSize) else { return false }
        return b.withUnsafeBytes { $0.u32(0) == CRC32C.mask(checksum) && $0.u32(4) == IndexSnapshot.endMagic }
    }
}
