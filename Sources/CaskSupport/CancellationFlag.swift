import Synchronization

/// A flag one thread raises and others check between steps of long work (a compaction pass
/// stops at its next check when the store closes). Thread-safe. What a check throws is the
/// caller's (`Cask` adds `check()`, which throws `CaskError.closed`).
package final class CancellationFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    package init() {}

    /// Asks the work to stop at its next check.
    package func cancel() { raised.store(true, ordering: .releasing) }

    /// Whether ``cancel()`` was called.
    package var isCancelled: Bool { raised.load(ordering: .acquiring) }
}
