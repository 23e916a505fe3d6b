#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization
import CaskFormat

/// The store directory's `LOCK` file, held with `flock(2)` for as long as the store is open.
///
/// The kernel drops the lock when the process dies, so a crashed owner never blocks the next open.
/// A held lock is retried for about 60 ms before the open fails, 2 s when it names this process
/// (see `waitForLock`).
/// The file holds the owner's pid (so that the error can name it) and the deletion generation
/// that read-only opens check (format-spec.md, "Lock file" and "Readers"): odd while the writer
/// is deleting segments, so that no reader builds its view from a directory listed halfway.
final class StoreLock: Sendable {
    let handle: CaskFileHandle
    /// The same file opened without `O_APPEND`, for writing the generation in place.
    private let content: CaskFileHandle
    let fileSystem: any CaskFileSystem
    private let released = Atomic<Bool>(false)
    private let generation = Atomic<UInt64>(0)

    private init(handle: CaskFileHandle, content: CaskFileHandle, fileSystem: any CaskFileSystem) {
        self.handle = handle
        self.content = content
        self.fileSystem = fileSystem
    }

    /// Whether a process `pid` exists (the pid `LOCK` names is the last writer's: when another
    /// program holds the lock, that writer may be long gone, and naming it would mislead).
    private static func isRunning(_ pid: Int32) -> Bool {
        pid > 0 && (kill(pid, 0) == 0 || errno == EPERM)
    }

    /// Takes the lock of `handle`, or returns who holds it (nil when it cannot be told). Retried
    /// for about 60 ms, and for up to 2 s while the file names this process, for two holders
    /// that let go by themselves: a child process forked by another thread (its copy of the
    /// descriptor lives until the child's exec closes it; a loaded machine can take that long
    /// to exec), and an instance its user has just dropped whose background thread is still
    /// inside a call (the last reference goes, and the lock with it, when that call returns).
    private static func waitForLock(_ handle: CaskFileHandle, fs: any CaskFileSystem) throws(CaskError) -> Int32?? {
        var waited: UInt32 = 0
        var owner: Int32?, ours = false
        for attempt in 0... {
            if try fs.tryLock(handle) { return nil }
            if attempt == 6 {   // the owner matters only once the short retries are spent: read it once
                owner = recordedOwner(handle, fs: fs)
                ours = owner == getpid()
            }
            guard attempt < 6 || (ours && waited < 2_000_000) else { return .some(owner.flatMap { isRunning($0) ? $0 : nil }) }
            let pause = attempt < 6 ? UInt32(1000) << UInt32(attempt) : 10_000
            usleep(pause)
            waited += pause
        }
        return nil
    }

    /// The pid `LOCK` names (its last writer), or nil. Harmless `try?`: the pid only names the
    /// owner in a message; a failed read names none.
    private static func recordedOwner(_ handle: CaskFileHandle, fs: any CaskFileSystem) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let n = (try? bytes.withMutableBytes { raw throws(CaskError) in try fs.read(handle, into: raw, at: 0) }) ?? 0
        return Int32(String(decoding: bytes.prefix(n), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func acquire(directory: String, fs: any CaskFileSystem) throws(CaskError) -> StoreLock {
        let path = FileNames.join(directory, FileNames.lock)
        let handle = try fs.open(path, mode: .appendOrCreate)
        let owner: Int32??
        do throws(CaskError) { owner = try waitForLock(handle, fs: fs) } catch { fs.close(handle); throw error }
        if let owner {
            fs.close(handle)
            throw .storeLocked(path: directory, ownerPID: owner)
        }
        // The generation goes on from the previous owner's, so that a reader never sees the
        // same value before and after a reopen.
        // A failed read throws (the open fails): taking it for an empty file would restart the
        // generation, and a reader could miss this reopen.
        var previous = [UInt8](repeating: 0, count: LockFileContent.size)
        let read: Int
        do throws(CaskError) {
            read = try previous.withMutableBytes { raw throws(CaskError) in try fs.read(handle, into: raw, at: 0) }
        } catch {
            fs.close(handle)
            throw error
        }
        // Modulo 2^64 (format-spec.md, "Lock file"): a damaged or forged generation near 2^64
        // wraps to a small even number, still different from the one found, instead of trapping.
        let first = (previous.prefix(read).withUnsafeBytes { LockFileContent.generation(in: $0) } ?? 0) / 2 * 2 &+ 2
        // The lock is ours: the file can be rewritten whole (a second descriptor without
        // O_APPEND, so that the generation can be written in place; closing it keeps the lock).
        let content: CaskFileHandle
        do throws(CaskError) {
            content = try fs.open(path, mode: .createTruncate)
        } catch {
            fs.close(handle)
            throw error
        }
        do throws(CaskError) {
            try LockFileContent.encode(pid: getpid(), generation: first).withBytes { raw throws(CaskError) in
                try fs.overwrite(content, raw, at: 0)
            }
        } catch {
            fs.close(content)
            fs.close(handle)
            throw error
        }
        let lock = StoreLock(handle: handle, content: content, fileSystem: fs)
        lock.generation.store(first, ordering: .relaxed)
        return lock
    }

    /// Runs `deletions` (unlinks of segments that other segments replace) with the generation
    /// odd, so that a reader listing the directory meanwhile loads again. When the start cannot
    /// be marked, nothing is deleted and the error is thrown: the files stay, which is always
    /// safe. When the end cannot be marked, the error is thrown too (readers wait for it; the
    /// next pass marks it again).
    func whileDeleting(_ deletions: () throws(CaskError) -> Void) throws(CaskError) {
        let start = generation.load(ordering: .relaxed) | 1   // odd: deleting
        try write(generation: start)
        generation.store(start, ordering: .relaxed)
        do throws(CaskError) { try deletions() } catch {
            // Harmless `try?`: the deletions' error is the one thrown; an odd generation left
            // behind only makes readers load again, and the next pass writes it again.
            if (try? write(generation: start &+ 1)) != nil { generation.store(start &+ 1, ordering: .relaxed) }
            throw error
        }
        try write(generation: start &+ 1)   // modulo 2^64, as in `acquire`
        generation.store(start &+ 1, ordering: .relaxed)
    }

    private func write(generation value: UInt64) throws(CaskError) {
        var bytes = [UInt8](repeating: 0, count: 8)
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, as: UInt64.self) }
        try bytes.withBytes { raw throws(CaskError) in
            try fileSystem.overwrite(content, raw, at: Int64(LockFileContent.generationOffset))
        }
    }

    /// Closes the lock file, which drops the lock. Idempotent.
    func release() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) {
            fileSystem.close(content)
            fileSystem.close(handle)
        }
    }

    deinit { release() }
}


// MARK: Reader side

extension StoreLock {
    /// The deletion generation in `directory`'s lock file as a reader sees it: nil when there is
    /// no lock file or it holds none (no writer since it was made, or one of an older version).
    static func generation(in directory: String, fs: any CaskFileSystem) -> UInt64? {
        guard let handle = try? fs.open(FileNames.join(directory, FileNames.lock), mode: .read) else { return nil }
        defer { fs.close(handle) }
        var bytes = [UInt8](repeating: 0, count: LockFileContent.size)
        guard let n = try? bytes.withMutableBytes({ raw throws(CaskError) in try fs.read(handle, into: raw, at: 0) }) else { return nil }
        return bytes.prefix(n).withUnsafeBytes { LockFileContent.generation(in: $0) }
    }

    /// The generation once it is even (no deletion under way), for a reader about to list the
    /// directory. Waits while it is odd; a generation odd for over 100 ms while nobody holds the
    /// lock was left by a writer that died mid-deletion (nothing changes the directory then).
    /// Throws when a live writer stays mid-deletion for 10 s.
    static func settledGeneration(in directory: String, fs: any CaskFileSystem) throws(CaskError) -> UInt64? {
        let start = DispatchTime.now().uptimeNanoseconds
        while true {
            let g = generation(in: directory, fs: fs)
            guard let g, g & 1 == 1 else { return g }
            let waited = DispatchTime.now().uptimeNanoseconds - start
            if waited > 100_000_000 && !isHeld(in: directory, fs: fs) { return g }
            if waited > 10_000_000_000 {
                throw .io(operation: "wait for the writer to finish deleting compacted segments", path: FileNames.join(directory, FileNames.lock), errno: EBUSY)
            }
            usleep(1000)
        }
    }

    /// Whether a process holds the lock: tries it for a moment (closing the file drops it).
    private static func isHeld(in directory: String, fs: any CaskFileSystem) -> Bool {
        guard let handle = try? fs.open(FileNames.join(directory, FileNames.lock), mode: .read) else { return false }
        defer { fs.close(handle) }
        return (try? fs.tryLock(handle)) != true
    }
}
