#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`.
///
/// Cask uses this instead of `Synchronization.Mutex` because ThreadSanitizer on Linux cannot see
/// `Mutex`'s futex-based synchronisation and reports races that are not there (checked with
/// Swift 6.3.1): the concurrency tests must be judged by the sanitizer's exit status, so the lock
/// must be one it understands. The cost is the same uncontended (one atomic each way).
// @unchecked: `value` is only touched between pthread_mutex_lock and pthread_mutex_unlock.
@usableFromInline
package final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Guarded by `mutex`, which also rules out overlapping accesses (hence no dynamic
    /// exclusivity check).
    @exclusivity(unchecked) @usableFromInline var value: Value

    @usableFromInline
    package init(_ value: consuming Value) {
        self.value = value
        mutex = PthreadMutex.make()
    }

    deinit {
        PthreadMutex.destroy(mutex)
    }

    /// Runs `body` with exclusive access to the value. Do not call back into the same lock.
    @inlinable @inline(__always)
    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Like ``withLock(_:)``, but a caller that finds the mutex held first retries for up to
    /// `spinNanoseconds` (yielding the processor between tries) before it sleeps in the kernel.
    /// For a lock whose holders keep it for short, bounded slices: waking a sleeping thread
    /// costs tens of microseconds on a virtual machine, longer than such a slice.
    @inlinable @inline(__always)
    package func withLock<R, E: Error>(spinningFor spinNanoseconds: UInt64, _ body: (inout Value) throws(E) -> R) throws(E) -> R {
        if pthread_mutex_trylock(mutex) != 0 { PthreadMutex.lock(mutex, spinningFor: spinNanoseconds) }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

/// Creates and destroys the `pthread_mutex_t`s of ``Locked``.
@usableFromInline
enum PthreadMutex {
    /// A new mutex on a cache line of its own, so that two locks never share one.
    @usableFromInline
    static func make() -> UnsafeMutablePointer<pthread_mutex_t> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(64, MemoryLayout<pthread_mutex_t>.stride), alignment: 64)
        let mutex = raw.bindMemory(to: pthread_mutex_t.self, capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "pthread_mutex_init failed: \(rc)")
        return mutex
    }

    /// Locks `mutex`: tries again while less than `nanoseconds` have passed, then blocks.
    @usableFromInline
    static func lock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>, spinningFor nanoseconds: UInt64) {
        let deadline = SliceDeadline(budget: nanoseconds)
        var tries = 0
        while !deadline.isPast(after: tries) {
            sched_yield()
            if pthread_mutex_trylock(mutex) == 0 { return }
            tries += 1
        }
        pthread_mutex_lock(mutex)
    }

    @usableFromInline
    static func destroy(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        pthread_mutex_destroy(mutex)
        UnsafeMutableRawPointer(mutex).deallocate()
    }
}
