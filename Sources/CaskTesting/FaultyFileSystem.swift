import Cask
import Foundation

/// Wraps a file system and makes chosen calls fail: the N-th call of an operation kind fails with
/// a chosen `errno`, once or from then on, and appends can be cut short. For testing that every
/// I/O failure surfaces as a typed error and leaves stored data readable.
///
/// ```swift
/// let faulty = FaultyFileSystem(wrapping: POSIXFileSystem())
/// faulty.inject(.init(operation: .sync, at: 3, errno: EIO))   // the third fsync fails
/// ```
public final class FaultyFileSystem: CaskFileSystem, @unchecked Sendable {
    // @unchecked: mutable state is behind `lock`.

    /// Kinds of call that can be made to fail.
    public enum Operation: String, Sendable, CaseIterable {
        case open, append, read, sync, syncDirectory, size, truncate, rename, remove, list, createDirectory, lock, overwrite
        /// `mapReadOnly`: a faulted call returns nil (a failed `mmap`), so reads fall back to
        /// ``FaultyFileSystem/read(_:into:at:)``.
        case map
    }

    /// One planned failure.
    public struct Fault: Sendable {
        public var operation: Operation
        /// 1-based index of the first call of `operation` that fails.
        public var at: Int
        public var errno: Int32
        /// Keep failing every later call of `operation` too.
        public var forever: Bool
        /// For appends: write this many bytes (a short write) instead of failing.
        public var shortWrite: Int?

        public init(operation: Operation, at: Int, errno: Int32 = EIO, forever: Bool = false, shortWrite: Int? = nil) {
            self.operation = operation
            self.at = at
            self.errno = errno
            self.forever = forever
            self.shortWrite = shortWrite
        }
    }

    private let base: any CaskFileSystem
    private let lock = NSLock()
    private var faults: [Fault] = []
    private var counts: [Operation: Int] = [:]
    private var injected = 0
    /// The path each open handle was opened with, so that an injected error names the file.
    private var paths: [Int32: String] = [:]

    public init(wrapping base: any CaskFileSystem) { self.base = base }

    /// Plans a failure (calls are counted from now on for its operation).
    public func inject(_ fault: Fault) {
        lock.withLock {
            counts[fault.operation] = 0
            faults.append(fault)
        }
    }

    /// Removes every planned failure: the file system works again.
    public func clear() { lock.withLock { faults = [] } }

    /// How many calls failed (or were cut short) so far.
    public var faultsInjected: Int { lock.withLock { injected } }

    /// Calls made per operation since its last ``inject(_:)``.
    public func calls(_ operation: Operation) -> Int { lock.withLock { counts[operation] ?? 0 } }

    private func check(_ op: Operation, _ path: String) throws(CaskError) -> Fault? {
        let fault: Fault? = lock.withLock {
            counts[op, default: 0] += 1
            let n = counts[op]!
            guard let f = faults.first(where: { $0.operation == op && (n == $0.at || ($0.forever && n > $0.at)) }) else { return nil }
            injected += 1
            return f
        }
        if let fault, fault.shortWrite == nil { throw .io(operation: op.rawValue, path: path, errno: fault.errno) }
        return fault
    }

    public func open(_ path: String, mode: CaskFileHandle.OpenMode) throws(CaskError) -> CaskFileHandle {
        _ = try check(.open, path)
        let handle = try base.open(path, mode: mode)
        lock.withLock { paths[handle.rawValue] = path }
        return handle
    }
    public func close(_ handle: CaskFileHandle) {
        lock.withLock { _ = paths.removeValue(forKey: handle.rawValue) }
        base.close(handle)
    }

    /// The path `handle` was opened with (its number when unknown).
    private func name(_ handle: CaskFileHandle) -> String {
        lock.withLock { paths[handle.rawValue] } ?? "fd \(handle.rawValue)"
    }
    public func append(_ handle: CaskFileHandle, _ buffer: UnsafeRawBufferPointer) throws(CaskError) -> Int {
        if let f = try check(.append, name(handle)), let n = f.shortWrite {
            return try base.append(handle, UnsafeRawBufferPointer(rebasing: buffer[0..<min(n, buffer.count)]))
        }
        return try base.append(handle, buffer)
    }
    public func read(_ handle: CaskFileHandle, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(CaskError) -> Int {
        _ = try check(.read, name(handle)); return try base.read(handle, into: buffer, at: offset)
    }
    public func sync(_ handle: CaskFileHandle) throws(CaskError) {
        _ = try check(.sync, name(handle)); try base.sync(handle)
    }
    public func syncDirectory(_ path: String) throws(CaskError) {
        _ = try check(.syncDirectory, path); try base.syncDirectory(path)
    }
    public func size(_ handle: CaskFileHandle) throws(CaskError) -> Int64 {
        _ = try check(.size, name(handle)); return try base.size(handle)
    }
    public func truncate(_ handle: CaskFileHandle, to length: Int64) throws(CaskError) {
        _ = try check(.truncate, name(handle)); try base.truncate(handle, to: length)
    }
    public func rename(_ source: String, to destination: String) throws(CaskError) {
        _ = try check(.rename, source); try base.rename(source, to: destination)
    }
    public func remove(_ path: String) throws(CaskError) {
        _ = try check(.remove, path); try base.remove(path)
    }
    public func contentsOfDirectory(_ path: String) throws(CaskError) -> [String] {
        _ = try check(.list, path); return try base.contentsOfDirectory(path)
    }
    public func createDirectory(_ path: String) throws(CaskError) {
        _ = try check(.createDirectory, path); try base.createDirectory(path)
    }
    public func tryLock(_ handle: CaskFileHandle) throws(CaskError) -> Bool {
        _ = try check(.lock, name(handle)); return try base.tryLock(handle)
    }
    public func overwrite(_ handle: CaskFileHandle, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws(CaskError) {
        _ = try check(.overwrite, name(handle)); try base.overwrite(handle, buffer, at: offset)
    }
    public func mapReadOnly(_ handle: CaskFileHandle, length: Int) -> UnsafeRawBufferPointer? {
        guard (try? check(.map, name(handle))) != nil else { return nil }   // the planned failure: no mapping
        return base.mapReadOnly(handle, length: length)
    }
    public func unmap(_ region: UnsafeRawBufferPointer) { base.unmap(region) }
    public func permissions(of path: String) throws(CaskError) -> UInt16? { try base.permissions(of: path) }
    public func setPermissions(_ mode: UInt16, of path: String) throws(CaskError) { try base.setPermissions(mode, of: path) }
    public func releasePages(_ part: UnsafeRawBufferPointer) { base.releasePages(part) }
}
