import Foundation
import Synchronization

/// A dedicated thread that calls a closure on a fixed interval until stopped (then it exits at
/// once). Used for the write buffer's flush deadline and interval syncs; blocking I/O stays off
/// Swift's cooperative pool.
final class BackgroundTicker: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let signal = DispatchSemaphore(value: 0)

    /// Starts the thread. `tick` must not capture the owner strongly (it would never be released);
    /// it returns false to end the thread.
    init(interval: Duration, name: String, tick: @escaping @Sendable () -> Bool) {
        let seconds = Double(max(1, interval.milliseconds)) / 1000
        let thread = Thread { [self] in
            while !stopped.load(ordering: .acquiring) {
                _ = signal.wait(timeout: .now() + seconds)
                if stopped.load(ordering: .acquiring) || !tick() { break }
            }
        }
        thread.name = name
        thread.start()
    }

    /// Ends the thread promptly.
    func stop() {
        if !stopped.exchange(true, ordering: .acquiringAndReleasing) { signal.signal() }
    }
}
