import Dispatch

/// A serial Dispatch queue that tasks can prefer to Swift's cooperative pool: the shared
/// tier's background work (the outbox's sender, the follower of the tier's changes, the
/// calls a deadline bounds) runs here, so it goes on while the app's own tasks hold every
/// thread of the pool (the pool has one thread per core; a test run or a server whose tasks
/// block in synchronous work would otherwise stall replication for as long). Thread-safe.
final class SharedTierExecutor: TaskExecutor {
    private let queue: DispatchQueue

    /// An executor on a queue of its own, named `label` (seen in debuggers and profiles).
    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
