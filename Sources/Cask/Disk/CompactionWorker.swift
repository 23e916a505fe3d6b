import Foundation
import Synchronization

/// The background compaction thread: runs a pass when woken by a write (a sealed segment, byte
/// pressure) and every `interval` otherwise. Blocking I/O stays off Swift's cooperative pool.
final class CompactionWorker: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let signal = DispatchSemaphore(value: 0)

    /// `pass` returns false once the store is gone or closed.
    init(interval: Duration, pass: @escaping @Sendable () -> Bool) {
        let thread = Thread { [self] in
            let timeout = Double(interval.milliseconds) / 1000
            while !stopped.load(ordering: .acquiring) {
                _ = signal.wait(timeout: .now() + timeout)
                if stopped.load(ordering: .acquiring) || !pass() { break }
            }
        }
        thread.name = "cask.compaction"
        thread.start()
    }

    /// Asks for a pass soon.
    func wake() { signal.signal() }

    /// Ends the thread after its current pass.
    func stop() {
        stopped.store(true, ordering: .releasing)
        signal.signal()
    }
}
