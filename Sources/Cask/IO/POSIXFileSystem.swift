import CCaskSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The path each open descriptor was opened with, so that an error names the file, not a number.
/// (`Locked`, not `Mutex`: see Locked.swift on ThreadSanitizer.)
private let openPaths = Locked<[Int32: String]>([:])

/// The production file system: each method is one system call (EINTR retried here, once place).
///
/// Durable sync is `fdatasync(2)` on Linux and `fcntl(F_FULLFSYNC)` on Darwin, where plain `fsync`
/// does not reach the platter. Thread-safe: its only state, the path of each open descriptor (for
/// error messages), is behind a mutex touched at open and close.
public struct POSIXFileSystem: CaskFileSystem {
    public init() {}

    @inline(__always)
    private func retrying<T: BinaryInteger>(_ body: () -> T) -> T {
        while true {
            let r = body()
            if r == -1 && errno == EINTR { continue }
            return r
        }
    }

    private func failure(_ op: String, _ path: String) -> CaskError {
        .io(operation: op, path: path, errno: errno)
    }

    private func name(_ h: CaskFileHandle) -> String {
        openPaths.withLock { $0[h.rawValue] } ?? "descriptor \(h.rawValue)"
    }

    public func open(_ path: String, mode: CaskFileHandle.OpenMode) throws(CaskError) -> CaskFileHandle {
        let flags: Int32
        switch mode {
        case .read: flags = O_RDONLY
        case .appendOrCreate: flags = O_RDWR | O_CREAT | O_APPEND
        case .createTruncate: flags = O_RDWR | O_CREAT | O_TRUNC
        }
        // O_NOFOLLOW: a store file that is a symbolic link is never followed (format-spec.md,
        // "Permissions"); O_NONBLOCK: a FIFO put in a file's place cannot hang the open (it has
        // no effect on a regular file).
        let fd = retrying { sys_open(path, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600) }
        if fd < 0 {
            if errno == ELOOP { throw .foreignFile(path: path, reason: "is a symbolic link") }
            throw failure("open", path)
        }
        do throws(CaskError) {
            try Self.requireOwnRegularFile(fd, path: path)
        } catch {
            _ = sys_close(fd)
            throw error
        }
        openPaths.withLock { $0[fd] = path }
        return CaskFileHandle(rawValue: fd)
    }

    /// The `fstat` check after every open: a regular file, owned by the user running the process
    /// or by the owner of its folder (root may open a store another user owns, as `cask verify`
    /// run by an administrator does). A FIFO, device, folder or socket in a store file's place,
    /// or a file another user planted in the folder, is refused.
    private static func requireOwnRegularFile(_ fd: Int32, path: String) throws(CaskError) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io(operation: "fstat", path: path, errno: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .foreignFile(path: path, reason: "is not a regular file") }
        if info.st_uid == geteuid() { return }
        var folder = stat()
        let parent = FileNames.directory(of: path)
        guard stat(parent, &folder) == 0 else { throw .io(operation: "stat", path: parent, errno: errno) }
        guard info.st_uid == folder.st_uid else {
            throw .foreignFile(path: path, reason: "is owned by user \(info.st_uid), not by the owner of its folder (user \(folder.st_uid))")
        }
    }

    public func close(_ handle: CaskFileHandle) {
        openPaths.withLock { _ = $0.removeValue(forKey: handle.rawValue) }
        _ = sys_close(handle.rawValue)
    }

    public func append(_ handle: CaskFileHandle, _ buffer: UnsafeRawBufferPointer) throws(CaskError) -> Int {
        let n = retrying { sys_write(handle.rawValue, buffer.baseAddress, buffer.count) }
        if n < 0 { throw failure("write", name(handle)) }
        return n
    }

    public func read(_ handle: CaskFileHandle, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(CaskError) -> Int {
        let n = retrying { pread(handle.rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
        if n < 0 { throw failure("pread", name(handle)) }
        return n
    }

    public func startWriteback(_ handle: CaskFileHandle, offset: Int64, count: Int64) {
        _ = cask_start_writeback(handle.rawValue, offset, count)
    }

    public func sync(_ handle: CaskFileHandle) throws(CaskError) {
        #if canImport(Darwin)
        let r = retrying { fcntl(handle.rawValue, F_FULLFSYNC) }
        #else
        let r = retrying { fdatasync(handle.rawValue) }
        #endif
        if r != 0 { throw failure("fsync", name(handle)) }
    }

    public func syncDirectory(_ path: String) throws(CaskError) {
        let fd = retrying { sys_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) }
        if fd < 0 { throw failure("open directory", path) }
        defer { _ = sys_close(fd) }
        #if canImport(Darwin)
        let r = retrying { fcntl(fd, F_FULLFSYNC) }
        #else
        let r = retrying { fsync(fd) }
        #endif
        if r != 0 { throw failure("fsync directory", path) }
    }

    public func size(_ handle: CaskFileHandle) throws(CaskError) -> Int64 {
        var st = stat()
        if fstat(handle.rawValue, &st) != 0 { throw failure("fstat", name(handle)) }
        return Int64(st.st_size)
    }

    public func truncate(_ handle: CaskFileHandle, to length: Int64) throws(CaskError) {
        let r = retrying { ftruncate(handle.rawValue, off_t(length)) }
        if r != 0 { throw failure("ftruncate", name(handle)) }
    }

    public func rename(_ source: String, to destination: String) throws(CaskError) {
        if sys_rename(source, destination) != 0 { throw failure("rename", source) }
    }

    public func link(_ source: String, to destination: String) throws(CaskError) {
        if retrying({ sys_link(source, destination) }) != 0 { throw failure("link", destination) }
    }

    public func remove(_ path: String) throws(CaskError) {
        if unlink(path) != 0 && errno != ENOENT { throw failure("unlink", path) }
    }

    public func contentsOfDirectory(_ path: String) throws(CaskError) -> [String] {
        guard let dir = opendir(path) else { throw failure("opendir", path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    public func createDirectory(_ path: String) throws(CaskError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST { throw failure("mkdir", prefix) }
        }
    }

    public func permissions(of path: String) throws(CaskError) -> UInt16? {
        var st = stat()
        if stat(path, &st) != 0 { throw failure("stat", path) }
        return UInt16(st.st_mode & 0o7777)
    }

    public func setPermissions(_ mode: UInt16, of path: String) throws(CaskError) {
        if retrying({ chmod(path, mode_t(mode)) }) != 0 { throw failure("chmod", path) }
    }

    public func tryLock(_ handle: CaskFileHandle) throws(CaskError) -> Bool {
        let r = retrying { flock(handle.rawValue, LOCK_EX | LOCK_NB) }
        if r == 0 { return true }
        if errno == EWOULDBLOCK { return false }
        throw failure("flock", name(handle))
    }

    public func mapReadOnly(_ handle: CaskFileHandle, length: Int) -> UnsafeRawBufferPointer? {
        guard length > 0 else { return nil }
        let p = mmap(nil, length, PROT_READ, MAP_SHARED, handle.rawValue, 0)
        guard let p, p != MAP_FAILED else { return nil }
        return UnsafeRawBufferPointer(start: p, count: length)
    }

    public func unmap(_ region: UnsafeRawBufferPointer) {
        if let base = region.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), region.count) }
    }

    public func releasePages(_ part: UnsafeRawBufferPointer) {
        guard let base = part.baseAddress else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = (Int(bitPattern: base) + page - 1) & ~(page - 1)
        let end = (Int(bitPattern: base) + part.count) & ~(page - 1)
        guard end > start, let p = UnsafeMutableRawPointer(bitPattern: start) else { return }
        // Advice: a refusal leaves the pages resident and changes nothing else.
        _ = madvise(p, end - start, MADV_DONTNEED)
    }

    public func overwrite(_ handle: CaskFileHandle, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws(CaskError) {
        var done = 0
        while done < buffer.count {
            let n = retrying { pwrite(handle.rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done)) }
            if n <= 0 { throw failure("pwrite", name(handle)) }
            done += n
        }
    }
}

// Module-qualified names for the C calls that POSIXFileSystem's own methods shadow.
#if canImport(Glibc)
@inline(__always) private func sys_open(_ p: String, _ f: Int32, _ m: mode_t) -> Int32 { Glibc.open(p, f, m) }
@inline(__always) private func sys_close(_ fd: Int32) -> Int32 { Glibc.close(fd) }
@inline(__always) private func sys_write(_ fd: Int32, _ b: UnsafeRawPointer?, _ n: Int) -> Int { Glibc.write(fd, b, n) }
@inline(__always) private func sys_rename(_ a: String, _ b: String) -> Int32 { Glibc.rename(a, b) }
@inline(__always) private func sys_link(_ a: String, _ b: String) -> Int32 { Glibc.link(a, b) }
#elseif canImport(Musl)
@inline(__always) private func sys_open(_ p: String, _ f: Int32, _ m: mode_t) -> Int32 { Musl.open(p, f, m) }
@inline(__always) private func sys_close(_ fd: Int32) -> Int32 { Musl.close(fd) }
@inline(__always) private func sys_write(_ fd: Int32, _ b: UnsafeRawPointer?, _ n: Int) -> Int { Musl.write(fd, b, n) }
@inline(__always) private func sys_rename(_ a: String, _ b: String) -> Int32 { Musl.rename(a, b) }
@inline(__always) private func sys_link(_ a: String, _ b: String) -> Int32 { Musl.link(a, b) }
#elseif canImport(Darwin)
@inline(__always) private func sys_open(_ p: String, _ f: Int32, _ m: mode_t) -> Int32 { Darwin.open(p, f, m) }
@inline(__always) private func sys_close(_ fd: Int32) -> Int32 { Darwin.close(fd) }
@inline(__always) private func sys_write(_ fd: Int32, _ b: UnsafeRawPointer?, _ n: Int) -> Int { Darwin.write(fd, b, n) }
@inline(__always) private func sys_rename(_ a: String, _ b: String) -> Int32 { Darwin.rename(a, b) }
@inline(__always) private func sys_link(_ a: String, _ b: String) -> Int32 { Darwin.link(a, b) }
#endif
