import Dispatch

/// Runs blocking store work one call at a time, on a Dispatch queue of its own (never on Swift's
/// cooperative pool, whose threads must not block): the driver's check-then-write calls
/// (`create`, `set` keeping an expiry) are atomic with each other.
final class WriteLock: Sendable {
    private let queue = DispatchQueue(label: "cask.hummingbird.writes")

    /// Runs `body` after every earlier call's `body` returned; rethrows what it throws.
    func run<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
