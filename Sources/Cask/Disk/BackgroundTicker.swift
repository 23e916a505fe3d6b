import Foundation
import Synchronization

/// A dedicated thread that calls a closure on a fixed interval until stopped. Used for the write
/// buffer's flush deadline and interval syncs; blocking I/O stays off Swift's cooperative pool.
final class BackgroundTicker: Sendable {
    private let stopped = Atomic<Bool>(false)

    /// Starts the thread. `tick` must not capture the owner strongly (it would never be released).
    init(interval: Duration, name: String, tick: @escaping @Sendable () -> Bool) {
        let micros = max(1000, interval.milliseconds * 1000)
        let thread = Thread { [self] in
            while !stopped.load(ordering: .acquiring) {
                usleep(UInt32(clamping: micros))
                if stopped.load(ordering: .acquiring) || !tick() { break }
            }
        }
        thread.name = name
        thread.start()
    }

    /// Asks the thread to finish; it exits after at most one more interval.
    func stop() { stopped.store(true, ordering: .releasing) }
}
