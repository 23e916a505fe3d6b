/// An open segment file. Shared by reference: a reader holding one may finish its read even after
/// compaction has dropped the segment; the descriptor is closed when the last holder lets go.
///
/// Immutable, so Sendable; reads go through the thread-safe file system seam.
final class SegmentFile: Sendable {
    let id: UInt32
    let path: String
    let handle: FileHandle
    let fileSystem: any FileSystem

    init(id: UInt32, path: String, handle: FileHandle, fileSystem: any FileSystem) {
        self.id = id
        self.path = path
        self.handle = handle
        self.fileSystem = fileSystem
    }

    deinit { fileSystem.close(handle) }
}
