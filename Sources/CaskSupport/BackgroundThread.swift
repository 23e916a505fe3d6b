import Foundation
import Synchronization
import CCaskSupport

/// A dedicated thread that runs `work` `interval` after it was armed, again and again (each run at
/// least `interval` after the previous one, unless ``wake()``d) while it stays armed, and sleeps without a timer while it is not (an idle store causes no wake-ups).
/// Used for the disk store's flush deadline and interval syncs, its background compaction, and
/// the memory cache's age trims; blocking I/O stays off Swift's cooperative pool.
///
/// Arming: `isArmed()` is asked before every sleep. A caller that makes it true calls
/// ``arm()``, which wakes a thread sleeping without a timer (at most one semaphore signal per
/// idle period: later calls see the flag already set). The thread clears the flag, then asks
/// `isArmed()` once more before it sleeps for good, so an arm that races with it is never lost.
@usableFromInline
package final class BackgroundThread: Sendable {
    private let stopped = Atomic<Bool>(false)
    /// Whether ``arm()`` was called since the thread last found `isArmed()` false.
    @usableFromInline package let armed = Atomic<Bool>(false)
    /// A ``wake()`` asked for a run now.
    private let woken = Atomic<Bool>(false)
    @usableFromInline let signal = DispatchSemaphore(value: 0)
    /// Times `work` ran (for tests of idle behaviour).
    package let runs = Atomic<Int>(0)

    /// Starts the thread. `work` and `isArmed` must not capture the owner strongly (it would
    /// never be released); `work` returns false to end the thread.
    /// `niceness` (Linux): the thread's nice value, 0 to 19; higher yields the processor to the
    /// store's callers when they want it (compaction: its work can wait, a put should not).
    package init(name: String, interval: Duration, niceness: Int32 = 0, isArmed: @escaping @Sendable () -> Bool = { true },
         work: @escaping @Sendable () -> Bool) {
        let seconds = Double(max(1, interval.milliseconds)) / 1000
        let thread = Thread { [self] in
            // Harmless to ignore: a thread left at the default priority only competes harder.
            if niceness > 0 { _ = cask_lower_thread_priority(niceness) }
            while !stopped.load(ordering: .acquiring) {
                if !woken.exchange(false, ordering: .acquiringAndReleasing) {
                    guard isArmed() else {
                        armed.store(false, ordering: .sequentiallyConsistent)
                        if !isArmed() && !woken.load(ordering: .acquiring) { signal.wait() }   // no timer
                        continue   // woken: run now; armed: wait out the interval first
                    }
                    // The whole interval, not cut short by a stale signal (an arm() that raced
                    // with the checks above): only stop() and wake() end the wait early, so runs
                    // are at least `interval` apart unless woken (the interval sync relies on it).
                    let deadline = DispatchTime.now() + seconds
                    while signal.wait(timeout: deadline) == .success
                            && !stopped.load(ordering: .acquiring) && !woken.load(ordering: .acquiring) {}
                    if stopped.load(ordering: .acquiring) { break }
                    woken.store(false, ordering: .releasing)   // a wake() meanwhile is served by this run
                }
                runs.add(1, ordering: .relaxed)
                if !work() { break }
            }
        }
        thread.name = name
        thread.start()
    }

    /// Something now needs the thread (`isArmed()` became true): makes sure it runs within
    /// `interval`. Cheap when already armed: one relaxed load (inlined into the caller's module).
    @inlinable @inline(__always)
    package func arm() {
        if !armed.load(ordering: .relaxed) && !armed.exchange(true, ordering: .sequentiallyConsistent) { signal.signal() }
    }

    /// Runs `work` now, armed or not.
    package func wake() {
        woken.store(true, ordering: .releasing)
        signal.signal()
    }

    /// Ends the thread once its current run of `work` (if any) returns.
    package func stop() {
        if !stopped.exchange(true, ordering: .acquiringAndReleasing) { signal.signal() }
    }
}
