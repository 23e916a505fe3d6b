#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A full write buffer of the active segment, handed to the flush thread, which writes it with
/// `write(2)` outside the store's lock (format-spec.md, "Writing protocol"): the bytes
/// `start ..< end`, where `start` is the writer's `flushedSize`. Until the writer completes it
/// (under the lock), readers copy those bytes from here, as from the write buffer.
///
/// Thread-safety: the flush thread claims it under the store's lock and writes it outside; the
/// lock's holder waits for a claimed write (``waitForWrite()``) before it writes or changes
/// anything after `start`. Only the claiming thread writes the file meanwhile; the buffer is
/// only read.
final class Handoff: Sendable {
    let buffer: WriteBuffer
    let start: Int64
    let end: Int64
    /// 0 pending, 1 writing (claimed by the flush thread), 2 written, 3 failed.
    private let state = Atomic<UInt8>(0)
    private let failure = Locked<CaskError?>(nil)

    init(buffer: WriteBuffer, start: Int64, end: Int64) {
        self.buffer = buffer
        self.start = start
        self.end = end
    }

    var isPending: Bool { state.load(ordering: .acquiring) == 0 }
    var isWritten: Bool { state.load(ordering: .acquiring) == 2 }
    var hasFailed: Bool { state.load(ordering: .acquiring) == 3 }
    /// Why the flush thread's write failed, when it did.
    var error: CaskError? { failure.withLock { $0 } }

    /// Under the store's lock: takes a pending handoff for the flush thread. False when it is
    /// not pending (claimed, written or failed already).
    func claim() -> Bool {
        state.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged
    }

    /// Outside the lock, by the thread that claimed it: appends the bytes to `handle`.
    func write(to handle: CaskFileHandle, fs: any CaskFileSystem) {
        do throws(CaskError) {
            try buffer.withBytes { bytes throws(CaskError) in try fs.appendAll(handle, bytes) }
            state.store(2, ordering: .releasing)
        } catch {
            failure.withLock { $0 = error }
            state.store(3, ordering: .releasing)
        }
    }

    /// Under the store's lock: waits while the flush thread is writing (a `write(2)` that needs
    /// no lock, so it always ends).
    func waitForWrite() {
        while state.load(ordering: .acquiring) == 1 { sched_yield() }
    }
}
