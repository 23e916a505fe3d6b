import Foundation
import CaskSupport
import Synchronization

/// Runs `operation` in a task of its own (preferring `executor`) and answers its result, or
/// throws ``SharedTierTimeout`` after `limit`, whichever comes first. Unlike a task group, it
/// does not wait for an operation that ignores cancellation: the late result is dropped.
func withDeadline<R: Sendable>(_ limit: Duration, on executor: (any TaskExecutor)? = nil,
                               _ operation: @escaping @Sendable () async throws -> R) async throws -> R {
    let once = Locked<CheckedContinuation<R, any Error>?>(nil)
    let work = Locked<Task<Void, Never>?>(nil)
    let result: R = try await withCheckedThrowingContinuation { continuation in
        once.withLock { $0 = continuation }
        let finish: @Sendable (Result<R, any Error>) -> Void = { result in
            guard let c = once.withLock({ c -> CheckedContinuation<R, any Error>? in defer { c = nil }; return c }) else { return }
            c.resume(with: result)
        }
        let task = Task(executorPreference: executor) {
            do { finish(.success(try await operation())) } catch { finish(.failure(error)) }
        }
        // A Dispatch timer, not a task: it fires on time even when Swift's pool is busy.
        // Whole seconds capped at a day: no overflow for any Duration.
        let seconds = min(max(0, limit.components.seconds), 86_400)
        let ns = seconds * 1_000_000_000 + max(0, limit.components.attoseconds) / 1_000_000_000
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(ns))) {
            finish(.failure(SharedTierTimeout(limit: limit)))
        }
        work.withLock { $0 = task }
    }
    work.withLock { $0?.cancel() }
    return result
}
