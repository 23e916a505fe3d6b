import Foundation
import Synchronization

/// The changes this node made that the shared tier has not acknowledged yet, sent in the
/// order they were made by one task. A failed or slow send keeps the change at the head and
/// is retried after a backoff (doubling from `retryDelay` to 32 ×, with jitter), so an outage
/// delays the changes and loses none while the process runs. Which keys (and whether any
/// prefix or tag removal) are waiting is known, so a read does not fetch from the shared
/// tier what this node already changed. Thread-safe.
final class SharedOutbox: Sendable {
    private struct State {
        var queue: [SharedChange] = []
        var head = 0
        /// Waiting changes per key.
        var keys: [String: Int] = [:]
        /// Waiting removals by prefix or tag.
        var broad = 0
        var draining = false
        var closed = false
    }

    private let state = Mutex(State())
    private let send: @Sendable (SharedChange) async throws -> Void
    private let retryDelay: Duration
    /// Called after each failed send (the breaker), and after each acknowledged one.
    private let onResult: @Sendable (Bool) -> Void

    init(retryDelay: Duration, send: @escaping @Sendable (SharedChange) async throws -> Void, onResult: @escaping @Sendable (Bool) -> Void) {
        self.send = send
        self.retryDelay = retryDelay
        self.onResult = onResult
    }

    /// Queues `change` after every change queued before it, and starts the sender when idle.
    func enqueue(_ change: SharedChange) {
        let start = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            s.queue.append(change)
            Self.count(change, in: &s, by: 1)
            guard !s.draining else { return false }
            s.draining = true
            return true
        }
        if start { Task.detached { await self.drain() } }
    }

    /// Whether a change of `key`, or any removal by prefix or tag, is waiting.
    func isWaiting(_ key: String) -> Bool { state.withLock { $0.broad > 0 || $0.keys[key] != nil } }

    /// How many changes are waiting.
    var count: Int { state.withLock { $0.queue.count - $0.head } }

    /// Stops sending (what is waiting stays unsent).
    func close() { state.withLock { $0.closed = true } }

    private func drain() async {
        var failures = 0
        while let change = state.withLock({ s -> SharedChange? in
            guard !s.closed, s.head < s.queue.count else { s.draining = false; return nil }
            return s.queue[s.head]
        }) {
            do {
                try await send(change)
                onResult(true)
                failures = 0
                state.withLock { s in
                    Self.count(change, in: &s, by: -1)
                    s.head += 1
                    if s.head > 1024, s.head * 2 > s.queue.count { s.queue.removeFirst(s.head); s.head = 0 }
                }
            } catch {
                onResult(false)
                failures += 1
                let factor = Double(1 << min(failures - 1, 5)) * Double.random(in: 0.5...1.0)
                try? await Task.sleep(for: retryDelay * factor)
            }
        }
    }

    private static func count(_ change: SharedChange, in s: inout State, by n: Int) {
        switch change {
        case .set(let key, _), .remove(let key, _):
            let left = (s.keys[key] ?? 0) + n
            s.keys[key] = left > 0 ? left : nil
        case .removePrefix, .removeTag:
            s.broad += n
        }
    }
}
