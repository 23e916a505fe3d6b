#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A byte range of a file that could not be read: the read kept failing with `errno`. Not
/// damage: nothing is known about the bytes there.
package struct UnreadableRange: Sendable, Equatable, CustomStringConvertible {
    package var path: String
    package var offset: Int64
    package var count: Int
    package var errno: Int32

    package var description: String {
        "\(path):\(offset): \(count) bytes could not be read (\(String(cString: strerror(errno))), errno \(errno))"
    }
}

/// Wraps a file system so that reads never fail: a read that still fails after ``attempts``
/// tries is narrowed to the 4 KiB pieces that fail, and each such piece reads as zero bytes
/// (inside the file's size), noted in ``unreadable``. Zeros fail every checksum, so the store's
/// damage rules then apply to them: this turns "could not be read" into "damaged" on purpose.
///
/// Only two callers may do that (format-spec.md, "A failed read is never damage"): `cask verify`,
/// which reports the noted ranges as unreadable (not as damage), and `cask verify --repair`,
/// which gives up the records it cannot read. The store never uses it on its own. Maps nothing,
/// so that every read goes through ``read(_:into:at:)``. Thread-safe.
package final class SalvagingFileSystem: CaskFileSystem, @unchecked Sendable {
    // @unchecked: the only mutable state, `noted`, is behind a lock.
    private let base: any CaskFileSystem
    private let noted = Locked<[UnreadableRange]>([])
    private let paths = Locked<[Int32: String]>([:])
    /// Tries of a failing read before it is narrowed (and of each piece before it reads as zeros).
    package let attempts: Int

    package init(wrapping base: any CaskFileSystem, attempts: Int = 3) {
        self.base = base
        self.attempts = max(1, attempts)
    }

    /// The ranges read as zeros so far, in the order they were met.
    package var unreadable: [UnreadableRange] { noted.withLock { $0 } }

    package func read(_ handle: CaskFileHandle, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(CaskError) -> Int {
        do throws(CaskError) {
            return try retried { () throws(CaskError) in try base.read(handle, into: buffer, at: offset) }
        } catch {
            return try salvage(handle, into: buffer, at: offset)
        }
    }

    private func salvage(_ handle: CaskFileHandle, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(CaskError) -> Int {
        // Narrow the failure: piece by piece, each tried again; the ones that still fail read as
        // zeros, up to the end of the file (nothing past it is invented).
        let size = try base.size(handle)
        let end = min(Int64(buffer.count), max(0, size - offset))
        var done: Int64 = 0
        while done < end {
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[Int(done)..<Int(min(end, done + 4096))])
            do throws(CaskError) {
                let n = try retried { () throws(CaskError) in try base.readExactly(handle, into: piece, at: offset + done) ? piece.count : 0 }
                if n == 0 { break }
            } catch {
                piece.initializeMemory(as: UInt8.self, repeating: 0)
                note(handle, offset: offset + done, count: piece.count, error: error)
            }
            done += Int64(piece.count)
        }
        return Int(done)
    }

    private func retried(_ body: () throws(CaskError) -> Int) throws(CaskError) -> Int {
        var last: CaskError = .closed
        for _ in 0..<attempts {
            do throws(CaskError) { return try body() } catch { last = error }
        }
        throw last
    }

    private func note(_ handle: CaskFileHandle, offset: Int64, count: Int, error: CaskError) {
        let path = paths.withLock { $0[handle.rawValue] } ?? "descriptor \(handle.rawValue)"
        var code: Int32 = EIO
        if case .io(_, _, let e) = error { code = e }
        noted.withLock { ranges in
            // A range read again (verify reads a file whole, then its header) is noted once.
            if ranges.contains(where: { $0.path == path && $0.offset <= offset && offset + Int64(count) <= $0.offset + Int64($0.count) }) { return }
            if let last = ranges.last, last.path == path, last.errno == code, last.offset + Int64(last.count) == offset {
                ranges[ranges.count - 1].count += count   // one range for adjacent pieces
            } else {
                ranges.append(UnreadableRange(path: path, offset: offset, count: count, errno: code))
            }
        }
    }

    package func open(_ path: String, mode: CaskFileHandle.OpenMode) throws(CaskError) -> CaskFileHandle {
        let handle = try base.open(path, mode: mode)
        paths.withLock { $0[handle.rawValue] = path }
        return handle
    }
    package func close(_ handle: CaskFileHandle) {
        paths.withLock { _ = $0.removeValue(forKey: handle.rawValue) }
        base.close(handle)
    }
    package func append(_ handle: CaskFileHandle, _ buffer: UnsafeRawBufferPointer) throws(CaskError) -> Int { try base.append(handle, buffer) }
    package func sync(_ handle: CaskFileHandle) throws(CaskError) { try base.sync(handle) }
    package func syncDirectory(_ path: String) throws(CaskError) { try base.syncDirectory(path) }
    package func size(_ handle: CaskFileHandle) throws(CaskError) -> Int64 { try base.size(handle) }
    package func truncate(_ handle: CaskFileHandle, to length: Int64) throws(CaskError) { try base.truncate(handle, to: length) }
    package func rename(_ source: String, to destination: String) throws(CaskError) { try base.rename(source, to: destination) }
    package func remove(_ path: String) throws(CaskError) { try base.remove(path) }
    package func contentsOfDirectory(_ path: String) throws(CaskError) -> [String] { try base.contentsOfDirectory(path) }
    package func createDirectory(_ path: String) throws(CaskError) { try base.createDirectory(path) }
    package func tryLock(_ handle: CaskFileHandle) throws(CaskError) -> Bool { try base.tryLock(handle) }
    package func overwrite(_ handle: CaskFileHandle, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws(CaskError) {
        try base.overwrite(handle, buffer, at: offset)
    }
    package func link(_ source: String, to destination: String) throws(CaskError) { try base.link(source, to: destination) }
    package func permissions(of path: String) throws(CaskError) -> UInt16? { try base.permissions(of: path) }
    package func setPermissions(_ mode: UInt16, of path: String) throws(CaskError) { try base.setPermissions(mode, of: path) }
    package func startWriteback(_ handle: CaskFileHandle, offset: Int64, count: Int64) { base.startWriteback(handle, offset: offset, count: count) }
}
