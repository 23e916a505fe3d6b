import Synchronization

/// A flag one thread raises and others check between steps of long work (a compaction pass
/// stops at its next check when the store closes). Thread-safe.
final class CancellationFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    init() {}

    /// Asks the work to stop at its next check.
    func cancel() { raised.store(true, ordering: .releasing) }

    var isCancelled: Bool { raised.load(ordering: .acquiring) }

    /// Throws ``CaskError/closed`` once ``cancel()`` was called.
    @inline(__always)
    func check() throws(CaskError) {
        if isCancelled { throw .closed }
    }
}
