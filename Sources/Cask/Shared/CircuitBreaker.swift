import Synchronization
import CaskSupport

/// Stops calls to the shared tier for a while after one failed: open for `openFor` ms after
/// each failure, closed again by the first success after that. Thread-safe.
final class CircuitBreaker: Sendable {
    private let openFor: Int64
    /// (open until, ms of the clock; failures in a row).
    private let state = Locked<(until: Int64, failures: Int)>((0, 0))

    init(openFor: Duration) { self.openFor = max(0, openFor.milliseconds) }

    /// Whether a call may go to the tier at `now` (ms).
    func allows(at now: Int64) -> Bool { state.withLock { now >= $0.until } }

    /// Notes a failure at `now` (ms): calls stop until `now + openFor`.
    func noteFailure(at now: Int64) { state.withLock { $0 = (now + openFor, $0.failures + 1) } }

    /// Notes a success: the failure count goes back to 0.
    func noteSuccess() { state.withLock { $0.failures = 0 } }

    /// Failures since the last success.
    var failuresInARow: Int { state.withLock { $0.failures } }
}
