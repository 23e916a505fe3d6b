#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The store's ``StoreState`` behind its mutex.
///
/// Callers (puts, removes, gets) take it with ``withLock(_:)``, which counts them while they
/// wait. Background work (compaction's liveness check and index switch, eviction) takes it in
/// short slices with ``withSlice(_:)``, which first lets every counted waiter in: a mutex does
/// not hand itself to the thread it wakes (glibc's and Darwin's both let the releasing thread
/// take it straight back), so without this a background loop that releases and retakes the
/// lock between slices can keep a writer out for all of them (144 ms over 127 slices, measured
/// before this existed). With it, a writer waits for at most the one slice that held the lock
/// when it arrived.
final class StoreStateLock: Sendable {
    private let locked: Locked<StoreState>
    /// Callers inside ``withLock(_:)`` that have not yet acquired the mutex.
    private let waiting = Atomic<Int>(0)

    init(_ state: consuming StoreState) {
        locked = Locked(state)
    }

    /// Runs `body` with exclusive access to the state. Do not call back into the same lock.
    @inline(__always)
    func withLock<R, E: Error>(_ body: (inout StoreState) throws(E) -> R) throws(E) -> R {
        waiting.add(1, ordering: .relaxed)
        return try locked.withLock(spinningFor: Self.callerSpinNanoseconds) { s throws(E) -> R in
            waiting.subtract(1, ordering: .relaxed)
            return try body(&s)
        }
    }

    /// How long a caller that finds the lock held retries before it sleeps: about two
    /// background slices (``sliceBudgetNanoseconds``), so that a put delayed by background work
    /// is not delayed again by the kernel's wake-up.
    static let callerSpinNanoseconds: UInt64 = 2 * sliceBudgetNanoseconds

    /// Runs one slice of background work under the lock, after every caller already waiting for
    /// it has had its turn. Keep `body` short (``sliceBudgetNanoseconds``; many items go through
    /// ``forEachInSlices(_:between:_:)``): a caller arriving while it runs waits for it. Finding
    /// the lock held (by a put: about a microsecond), it retries before sleeping, as callers do:
    /// a background thread woken from the kernel for every slice did half the work.
    @inline(__always)
    func withSlice<R, E: Error>(_ body: (inout StoreState) throws(E) -> R) throws(E) -> R {
        yieldToWaiters()
        return try locked.withLock(spinningFor: Self.callerSpinNanoseconds) { s throws(E) -> R in try body(&s) }
    }

    /// Waits (yielding the processor) while callers wait for the lock, up to about a
    /// millisecond: long enough for a woken writer to run, never a livelock under endless load.
    private func yieldToWaiters() {
        var spins = 0
        while waiting.load(ordering: .relaxed) > 0 && spins < 2000 {
            sched_yield()
            spins += 1
        }
    }
}
