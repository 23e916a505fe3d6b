import Foundation
import Synchronization

/// Runs `operation` in a task of its own and answers its result, or throws
/// ``SharedTierTimeout`` after `limit`, whichever comes first. Unlike a task group, it does not
/// wait for an operation that ignores cancellation: the late result is dropped.
func withDeadline<R: Sendable>(_ limit: Duration, _ operation: @escaping @Sendable () async throws -> R) async throws -> R {
    let once = Mutex<CheckedContinuation<R, any Error>?>(nil)
    let tasks = Mutex<[Task<Void, Never>]>([])
    let result: R = try await withCheckedThrowingContinuation { continuation in
        once.withLock { $0 = continuation }
        let finish: @Sendable (Result<R, any Error>) -> Void = { result in
            guard let c = once.withLock({ c -> CheckedContinuation<R, any Error>? in defer { c = nil }; return c }) else { return }
            c.resume(with: result)
        }
        let work = Task {
            do { finish(.success(try await operation())) } catch { finish(.failure(error)) }
        }
        // A Dispatch timer, not a task: it fires on time even when Swift's pool is busy.
        // Whole seconds capped at a day: no overflow for any Duration.
        let seconds = min(max(0, limit.components.seconds), 86_400)
        let ns = seconds * 1_000_000_000 + max(0, limit.components.attoseconds) / 1_000_000_000
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(ns))) {
            finish(.failure(SharedTierTimeout(limit: limit)))
        }
        tasks.withLock { $0 = [work] }
    }
    for task in tasks.withLock({ $0 }) { task.cancel() }
    return result
}

/// A shared-tier call passed ``CacheOptions/sharedTierTimeout``.
public struct SharedTierTimeout: Error, Sendable, CustomStringConvertible {
    /// The limit it passed.
    public let limit: Duration
    /// Says which limit passed.
    public var description: String { "the shared tier did not answer within \(limit)" }
}

/// Thrown by a ``SharedTier`` for a change it will never apply (a value too large, a script
/// error): the outbox drops the change instead of retrying it (which would hold back every
/// change queued after it), and counts it in ``SharedTierStatistics/changesRefused``.
public struct SharedTierRefusal: Error, Sendable, CustomStringConvertible {
    /// Why, in the tier's words.
    public let reason: String
    /// A refusal for `reason`.
    public init(reason: String) { self.reason = reason }
    /// Says why.
    public var description: String { "the shared tier refused the change: \(reason)" }
}
