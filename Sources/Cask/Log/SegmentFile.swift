/// An open segment file. Shared by reference: a reader holding one may finish its read even after
/// compaction has dropped the segment; the descriptor is closed (and the mapping unmapped) when the
/// last holder lets go.
///
/// Reads use a read-only shared mapping when the file system provides one (no system call per
/// read), and `pread` otherwise or beyond the mapping. A segment is mapped once, for `mapLength`
/// bytes: its size when sealed, or the segment size limit when it is still being written (pages
/// past the end of the file are never touched: the index only points at written records).
// @unchecked: every stored property is immutable; the mapping is read-only and outlives all users.
final class SegmentFile: @unchecked Sendable {
    let id: UInt32
    let path: String
    let handle: CaskFileHandle
    let fileSystem: any CaskFileSystem
    let mapping: UnsafeRawBufferPointer?

    init(id: UInt32, path: String, handle: CaskFileHandle, fileSystem: any CaskFileSystem, mapLength: Int = 0) {
        self.id = id
        self.path = path
        self.handle = handle
        self.fileSystem = fileSystem
        self.mapping = mapLength > 0 ? fileSystem.mapReadOnly(handle, length: mapLength) : nil
    }

    /// The mapped bytes `offset ..< offset + count`, when they lie inside the mapping.
    @inline(__always)
    func mappedBytes(at offset: Int, count: Int) -> UnsafeRawBufferPointer? {
        guard let mapping, offset + count <= mapping.count else { return nil }
        return UnsafeRawBufferPointer(rebasing: mapping[offset..<(offset + count)])
    }

    deinit {
        if let mapping { fileSystem.unmap(mapping) }
        fileSystem.close(handle)
    }
}
