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
/// A held lock is retried for about 60 ms before the open fails (see `acquire`).
/// The owner's pid is written into the file only so that the error can name it.
final class StoreLock: Sendable {
    let handle: CaskFileHandle
    let fileSystem: any CaskFileSystem
    private let released = Atomic<Bool>(false)

    private init(handle: CaskFileHandle, fileSystem: any CaskFileSystem) {
        self.handle = handle
        self.fileSystem = fileSystem
    }

    static func acquire(directory: String, fs: any CaskFileSystem) throws(CaskError) -> StoreLock {
        let path = FileNames.join(directory, FileNames.lock)
        let handle = try fs.open(path, mode: .appendOrCreate)
        var locked = false
        // A lock just released can still be held for a moment by a child process forked by
        // another thread (its copy of the descriptor lives until the child's exec closes it):
        // retry for about 60 ms before naming an owner.
        for attempt in 0..<7 {
            do throws(CaskError) { locked = try fs.tryLock(handle) } catch { fs.close(handle); throw error }
            if locked { break }
            if attempt < 6 { usleep(useconds_t(1000 << attempt)) }
        }
        guard locked else {
            var bytes = [UInt8](repeating: 0, count: 32)
            let n = (try? bytes.withMutableBytes { raw throws(CaskError) in try fs.read(handle, into: raw, at: 0) }) ?? 0
            fs.close(handle)
            let text = String(decoding: bytes.prefix(n), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw .storeLocked(path: directory, ownerPID: Int32(text))
        }
        let pid = Array("\(getpid())\n".utf8)
        do throws(CaskError) {
            try fs.truncate(handle, to: 0)
            try pid.withBytes { raw throws(CaskError) in try fs.overwrite(handle, raw, at: 0) }
        } catch {
            fs.close(handle)
            throw error
        }
        return StoreLock(handle: handle, fileSystem: fs)
    }

    /// Closes the lock file, which drops the lock. Idempotent.
    func release() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) { fileSystem.close(handle) }
    }

    deinit { release() }
}

