import Dispatch

/// A serial Dispatch queue that tasks can prefer to Swift's cooperative pool
/// (`Task(executorPreference:)`): a cache runs its shared tier's background work (the outbox's
/// sender, the follower of the tier's changes) on executors of this kind, so that it goes on
/// while the app's own tasks hold every thread of the pool (the pool has one thread per core; a
/// server whose tasks block in synchronous work would otherwise stall replication for as
/// long). A ``SharedTier`` can run the tasks it starts (a follower's reads) on one too: an
/// unstructured `Task {}` does not inherit the preference of the task that creates it.
///
/// Each executor has a queue of its own; jobs run one at a time, in order. Do not block in
/// them for long: every task preferring the executor waits meanwhile. Thread-safe.
public final class SharedTierExecutor: TaskExecutor {
    private let queue: DispatchQueue

    /// An executor on a queue of its own, named `label` (seen in debuggers and profiles).
    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `job` on the queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
