/// Wraps the store's file system so that its file and directory syncs are timed for the
/// store's ``TimingObservers``; every other call goes straight through. While nothing observes,
/// a sync costs one relaxed atomic load more.
struct TimedFileSystem: CaskFileSystem {
    let base: any CaskFileSystem
    let timings: TimingObservers

    func sync(_ handle: CaskFileHandle) throws(CaskError) {
        try timings.time(.fileSync) { () throws(CaskError) in try base.sync(handle) }
    }
    func syncDirectory(_ path: String) throws(CaskError) {
        try timings.time(.directorySync) { () throws(CaskError) in try base.syncDirectory(path) }
    }

    func open(_ path: String, mode: CaskFileHandle.OpenMode) throws(CaskError) -> CaskFileHandle { try base.open(path, mode: mode) }
    func close(_ handle: CaskFileHandle) { base.close(handle) }
    func append(_ handle: CaskFileHandle, _ buffer: UnsafeRawBufferPointer) throws(CaskError) -> Int { try base.append(handle, buffer) }
    func read(_ handle: CaskFileHandle, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(CaskError) -> Int {
        try base.read(handle, into: buffer, at: offset)
    }
    func size(_ handle: CaskFileHandle) throws(CaskError) -> Int64 { try base.size(handle) }
    func truncate(_ handle: CaskFileHandle, to length: Int64) throws(CaskError) { try base.truncate(handle, to: length) }
    func rename(_ source: String, to destination: String) throws(CaskError) { try base.rename(source, to: destination) }
    func remove(_ path: String) throws(CaskError) { try base.remove(path) }
    func contentsOfDirectory(_ path: String) throws(CaskError) -> [String] { try base.contentsOfDirectory(path) }
    func createDirectory(_ path: String) throws(CaskError) { try base.createDirectory(path) }
    func tryLock(_ handle: CaskFileHandle) throws(CaskError) -> Bool { try base.tryLock(handle) }
    func overwrite(_ handle: CaskFileHandle, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws(CaskError) {
        try base.overwrite(handle, buffer, at: offset)
    }
    func mapReadOnly(_ handle: CaskFileHandle, length: Int) -> UnsafeRawBufferPointer? { base.mapReadOnly(handle, length: length) }
    func unmap(_ region: UnsafeRawBufferPointer) { base.unmap(region) }
    func releasePages(_ part: UnsafeRawBufferPointer) { base.releasePages(part) }
    func link(_ source: String, to destination: String) throws(CaskError) { try base.link(source, to: destination) }
    func startWriteback(_ handle: CaskFileHandle, offset: Int64, count: Int64) { base.startWriteback(handle, offset: offset, count: count) }
}
