/// The file system as one store uses it: the options' file system, with the store's two
/// additions at the seam. Its file and directory syncs are timed for the store's
/// ``TimingObservers`` (while nothing observes, a sync costs one relaxed atomic load more), and
/// the files and folders it creates get the store's ``StorePermissions`` exactly, whatever the
/// umask (the base creates them owner-only; a wider choice costs one `chmod` per creation).
/// Every other call goes straight through.
struct StoreFileSystem: CaskFileSystem {
    let base: any CaskFileSystem
    let timings: TimingObservers
    let permissions: StorePermissions

    func sync(_ handle: CaskFileHandle) throws(CaskError) {
        try timings.time(.fileSync) { () throws(CaskError) in try base.sync(handle) }
    }
    func syncDirectory(_ path: String) throws(CaskError) {
        try timings.time(.directorySync) { () throws(CaskError) in try base.syncDirectory(path) }
    }

    func open(_ path: String, mode: CaskFileHandle.OpenMode) throws(CaskError) -> CaskFileHandle {
        let handle = try base.open(path, mode: mode)
        guard mode != .read, permissions != .ownerOnly else { return handle }
        do throws(CaskError) { try base.setPermissions(permissions.fileMode, of: path) } catch {
            base.close(handle)
            throw error
        }
        return handle
    }
    func createDirectory(_ path: String) throws(CaskError) {
        try base.createDirectory(path)
        if permissions != .ownerOnly { try base.setPermissions(permissions.folderMode, of: path) }
    }
    func permissions(of path: String) throws(CaskError) -> UInt16? { try base.permissions(of: path) }
    func setPermissions(_ mode: UInt16, of path: String) throws(CaskError) { try base.setPermissions(mode, of: path) }
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
