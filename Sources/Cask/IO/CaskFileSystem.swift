/// An open file, as a ``CaskFileSystem`` numbers it. Opaque to the store.
///
/// Named for Cask so that it never clashes with Foundation's `FileHandle` in an app that imports
/// both.
public struct CaskFileHandle: Hashable, Sendable {
    /// The implementation's number for this file (a POSIX file descriptor in production).
    public let rawValue: Int32

    /// Wraps an implementation's number for an open file.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// How a file is opened.
    public enum OpenMode: Sendable {
        /// Read only; the file must exist.
        case read
        /// Read and append; the file is created when missing (mode 0600: see ``StorePermissions``).
        /// Writes go to the end.
        case appendOrCreate
        /// Read and write, truncated to zero or created (mode 0600).
        case createTruncate
    }
}

/// The one seam through which the store does all file I/O.
///
/// Production uses ``POSIXFileSystem``, which calls the system directly. Tests substitute an
/// implementation that fails chosen calls or simulates power loss (see the `CaskTesting` product).
/// Implementations must be thread-safe: readers call ``read(_:into:at:)`` concurrently with the writer.
/// Every method throws ``CaskError/io(operation:path:errno:)`` on failure.
public protocol CaskFileSystem: Sendable {
    /// Opens `path`. `path` is absolute or relative to the working directory.
    func open(_ path: String, mode: CaskFileHandle.OpenMode) throws(CaskError) -> CaskFileHandle
    /// Closes a handle. Errors are ignored: a close error cannot be acted on.
    func close(_ handle: CaskFileHandle)
    /// Appends up to `buffer.count` bytes at the end of the file; returns how many were written
    /// (a short write is allowed and is retried by the caller).
    func append(_ handle: CaskFileHandle, _ buffer: UnsafeRawBufferPointer) throws(CaskError) -> Int
    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (0 at end of file).
    func read(_ handle: CaskFileHandle, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(CaskError) -> Int
    /// Makes the file's data durable (`fdatasync`; `F_FULLFSYNC` on Darwin).
    func sync(_ handle: CaskFileHandle) throws(CaskError)
    /// Makes a directory's entries (creates, renames, unlinks) durable.
    func syncDirectory(_ path: String) throws(CaskError)
    /// The file's current size in bytes.
    func size(_ handle: CaskFileHandle) throws(CaskError) -> Int64
    /// Cuts the file to `length` bytes.
    func truncate(_ handle: CaskFileHandle, to length: Int64) throws(CaskError)
    /// Atomically replaces `destination` with `source`.
    func rename(_ source: String, to destination: String) throws(CaskError)
    /// Removes a file. A missing file is not an error.
    func remove(_ path: String) throws(CaskError)
    /// Names of the entries in a directory (no `.` or `..`).
    func contentsOfDirectory(_ path: String) throws(CaskError) -> [String]
    /// Creates a directory and missing parents (mode 0700); an existing directory is not an error.
    func createDirectory(_ path: String) throws(CaskError)
    /// Takes an exclusive advisory lock on an open file without waiting (`flock`).
    /// Returns false when another open file description holds it.
    func tryLock(_ handle: CaskFileHandle) throws(CaskError) -> Bool
    /// Writes all of `buffer` at `offset` (used only for the lock file: owner pid and deletion generation).
    func overwrite(_ handle: CaskFileHandle, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws(CaskError)
    /// Maps `length` bytes of the file read-only and shared, or returns nil when the implementation
    /// does not map (reads then use ``read(_:into:at:)``). The store only touches mapped bytes that
    /// lie inside the file. The default implementation returns nil.
    func mapReadOnly(_ handle: CaskFileHandle, length: Int) -> UnsafeRawBufferPointer?
    /// Unmaps a region returned by ``mapReadOnly(_:length:)``.
    func unmap(_ region: UnsafeRawBufferPointer)
    /// Lets the system take back the memory pages of a part of a region returned by
    /// ``mapReadOnly(_:length:)`` (Linux `madvise` with `MADV_DONTNEED`): the bytes stay the
    /// file's, and a later read of them pages them in again. A hint for compaction, which reads
    /// each input once: without it every input page it read counts in the process's resident
    /// memory until the input is deleted. Never fails. The default implementation does nothing.
    func releasePages(_ part: UnsafeRawBufferPointer)
    /// Makes `destination` a second name of the file `source` (a hard link), for backups. The
    /// default implementation throws `ENOTSUP` (errno 95): callers then copy the bytes instead.
    func link(_ source: String, to destination: String) throws(CaskError)
    /// Asks the system to start writing `count` bytes at `offset` to the device now, without
    /// waiting for them and without making them durable (Linux `sync_file_range` with
    /// `SYNC_FILE_RANGE_WRITE`), so that a later ``sync(_:)`` has less left to write. A hint:
    /// it never fails, and a write error stays for that later ``sync(_:)`` to report. The
    /// default implementation does nothing.
    func startWriteback(_ handle: CaskFileHandle, offset: Int64, count: Int64)
    /// The permission bits (the `0o7777` part of `st_mode`) of `path`, or nil when the
    /// implementation keeps none (the default).
    func permissions(of path: String) throws(CaskError) -> UInt16?
    /// Sets the permission bits of `path` (`chmod`). The default implementation does nothing.
    func setPermissions(_ mode: UInt16, of path: String) throws(CaskError)
}

extension CaskFileSystem {
    public func mapReadOnly(_ handle: CaskFileHandle, length: Int) -> UnsafeRawBufferPointer? { nil }
    public func unmap(_ region: UnsafeRawBufferPointer) {}
    public func releasePages(_ part: UnsafeRawBufferPointer) {}
    public func startWriteback(_ handle: CaskFileHandle, offset: Int64, count: Int64) {}
    public func permissions(of path: String) throws(CaskError) -> UInt16? { nil }
    public func setPermissions(_ mode: UInt16, of path: String) throws(CaskError) {}
    public func link(_ source: String, to destination: String) throws(CaskError) {
        throw .io(operation: "link", path: destination, errno: 95)
    }
}

extension CaskFileSystem {
    /// Appends all of `buffer`, retrying short writes. Throws on the first failing call.
    @inlinable
    func appendAll(_ handle: CaskFileHandle, _ buffer: UnsafeRawBufferPointer) throws(CaskError) {
        var done = 0
        while done < buffer.count {
            let n = try append(handle, UnsafeRawBufferPointer(rebasing: buffer[done...]))
            if n <= 0 { throw CaskError.io(operation: "write", path: "fd \(handle.rawValue)", errno: 5) }
            done += n
        }
    }

    /// Opens `path` for reading, or returns nil when it does not exist (ENOENT). Every other
    /// failure throws: a file that is there but cannot be opened is an I/O error, never taken
    /// for a missing one (format-spec.md, "Recovery", "A failed read is never damage").
    func openIfPresent(_ path: String) throws(CaskError) -> CaskFileHandle? {
        do throws(CaskError) {
            return try open(path, mode: .read)
        } catch .io(_, _, 2) {   // ENOENT
            return nil
        }
    }

    /// Reads exactly `buffer.count` bytes at `offset`; returns false when the file ends first.
    @inlinable
    func readExactly(_ handle: CaskFileHandle, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(CaskError) -> Bool {
        var done = 0
        while done < buffer.count {
            let n = try read(handle, into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: offset + Int64(done))
            if n == 0 { return false }
            done += n
        }
        return true
    }

    /// Reads a whole file into memory.
    func readWholeFile(_ handle: CaskFileHandle) throws(CaskError) -> [UInt8] {
        let size = Int(try self.size(handle))
        if size == 0 { return [] }
        var bytes = [UInt8](repeating: 0, count: size)
        var got = 0
        var failure: CaskError?
        bytes.withUnsafeMutableBytes { raw in
            while got < size {
                do throws(CaskError) {
                    let n = try read(handle, into: UnsafeMutableRawBufferPointer(rebasing: raw[got...]), at: Int64(got))
                    if n == 0 { break }
                    got += n
                } catch { failure = error; break }
            }
        }
        if let failure { throw failure }
        if got < size { bytes.removeLast(size - got) }
        return bytes
    }
}
