import Foundation
import Synchronization

/// A dedicated thread that runs `work` every `interval`, or sooner when woken, until `work`
/// returns false or the thread is stopped. Used for the disk store's flush deadline and interval
/// syncs, its background compaction, and the memory cache's age trims; blocking I/O stays off
/// Swift's cooperative pool.
final class BackgroundThread: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let signal = DispatchSemaphore(value: 0)

    /// Starts the thread. `work` must not capture the owner strongly (it would never be released).
    init(name: String, interval: Duration, work: @escaping @Sendable () -> Bool) {
        let seconds = Double(max(1, interval.milliseconds)) / 1000
        let thread = Thread { [self] in
            while !stopped.load(ordering: .acquiring) {
                _ = signal.wait(timeout: .now() + seconds)
                if stopped.load(ordering: .acquiring) || !work() { break }
            }
        }
        thread.name = name
        thread.start()
    }

    /// Runs `work` soon instead of at the end of the interval.
    func wake() { signal.signal() }

    /// Ends the thread once its current run of `work` (if any) returns.
    func stop() {
        if !stopped.exchange(true, ordering: .acquiringAndReleasing) { signal.signal() }
    }
}
