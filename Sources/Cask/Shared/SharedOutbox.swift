import Foundation
import CaskSupport
import Synchronization

/// The changes this node made that the shared tier has not acknowledged yet, sent in the
/// order they were made by one task. A failed or slow send keeps the change at the head and
/// is retried after a backoff (doubling from `retryDelay` to 32 ×, with jitter), so an outage
/// delays the changes and loses none while the process runs. Which keys (and whether any
/// prefix or tag removal) are waiting is known, so a read does not fetch from the shared
/// tier what this node already changed. With an ``OutboxJournal`` each change is also on disk
/// until acknowledged, so a restart of the process loses none. Thread-safe.
final class SharedOutbox: Sendable {
    private struct State {
        /// In order; `ready` once the change is in the journal (the sender waits for that, so
        /// an acknowledged change never stays on disk to be sent again after a restart).
        var queue: [(place: UInt64, change: SharedChange, ready: Bool)] = []
        var nextPlace: UInt64 = 1
        var head = 0
        /// Waiting changes per key.
        var keys: [String: Int] = [:]
        /// Waiting removals by prefix or tag.
        var broad = 0
        var draining = false
        var closed = false
        /// Run once no change of the key waits (``whenSent(_:_:)``).
        var whenSent: [String: [@Sendable () -> Void]] = [:]
    }

    private let state = Locked(State())
    private let journal: OutboxJournal?
    /// Changes the tier refused for good (dropped).
    let refused = Atomic<Int>(0)
    private let send: @Sendable (SharedChange) async throws -> Void
    private let retryDelay: Duration
    /// Where the sender runs (off Swift's pool).
    private let executor: SharedTierExecutor
    /// Called after each failed send (the breaker), and after each acknowledged one.
    private let onResult: @Sendable (Bool) -> Void

    /// Queues again what `journal` holds from before, in order.
    init(journal: OutboxJournal?, retryDelay: Duration, executor: SharedTierExecutor, send: @escaping @Sendable (SharedChange) async throws -> Void,
         onResult: @escaping @Sendable (Bool) -> Void) throws(CaskError) {
        let pending = try journal?.pending(skipped: { _ in }) ?? []
        self.journal = journal
        self.send = send
        self.retryDelay = retryDelay
        self.executor = executor
        self.onResult = onResult
        state.withLock { s in
            for (place, change) in pending {
                s.queue.append((place, change, true))
                Self.count(change, in: &s, by: 1)
            }
            s.nextPlace = (pending.last?.0 ?? 0) + 1
        }
        if !pending.isEmpty { startDraining() }
    }

    /// Queues `change` after every change queued before it, writes it to the journal, and
    /// starts the sender when idle. The sender sends a change only once it is in the journal.
    /// - Throws: what writing the journal throws: the change is still sent (it is queued in
    ///   memory), but would not survive a restart.
    func enqueue(_ change: SharedChange) throws(CaskError) {
        let place = state.withLock { s -> UInt64? in
            guard !s.closed, s.nextPlace < UInt64.max else { return nil }
            defer { s.nextPlace += 1 }
            s.queue.append((s.nextPlace, change, journal == nil))
            Self.count(change, in: &s, by: 1)
            return s.nextPlace
        }
        guard let place else { return }
        defer {
            state.withLock { s in
                if let i = s.queue[s.head...].firstIndex(where: { $0.place == place }) { s.queue[i].ready = true }
            }
            startDraining()
        }
        try journal?.append(change, at: place)
    }

    private func startDraining() {
        let start = state.withLock { s -> Bool in
            guard !s.draining, !s.closed else { return false }
            s.draining = true
            return true
        }
        if start { Task.detached(executorPreference: executor) { await self.drain() } }
    }

    /// Runs `action` once no change of `key` waits (sent or refused): at once when none does,
    /// else when the last one waiting goes (changes of `key` queued meanwhile postpone it).
    /// Never after ``close()``.
    func whenSent(_ key: String, _ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            guard s.keys[key] != nil else { return !s.closed }
            s.whenSent[key, default: []].append(action)
            return false
        }
        if now { action() }
    }

    /// Whether a change of `key`, or any removal by prefix or tag, is waiting.
    func isWaiting(_ key: String) -> Bool { state.withLock { $0.broad > 0 || $0.keys[key] != nil } }

    /// How many changes are waiting.
    var count: Int { state.withLock { $0.queue.count - $0.head } }

    /// Stops sending (what is waiting stays unsent, and in the journal) and closes the journal.
    func close() throws(CaskError) {
        state.withLock { $0.closed = true }
        try journal?.close()
    }

    private func drain() async {
        var failures = 0
        while let (place, change) = state.withLock({ s -> (UInt64, SharedChange)? in
            // Stops at a change not yet in the journal: its enqueue starts the sender again.
            guard !s.closed, s.head < s.queue.count, s.queue[s.head].ready else { s.draining = false; return nil }
            return (s.queue[s.head].place, s.queue[s.head].change)
        }) {
            do {
                try await send(change)
                onResult(true)
                failures = 0
                // A failed removal leaves the change to be sent again after a restart, which
                // the tier refuses as no newer than what it holds.
                try? journal?.remove(place)
                let done = state.withLock { s in
                    defer {
                        s.head += 1
                        if s.head > 1024, s.head * 2 > s.queue.count { s.queue.removeFirst(s.head); s.head = 0 }
                    }
                    return Self.count(change, in: &s, by: -1)
                }
                for action in done { action() }
            } catch is SharedTierRefusal {
                onResult(false)
                refused.add(1, ordering: .relaxed)
                let done = state.withLock { s in
                    defer { s.head += 1 }
                    return Self.count(change, in: &s, by: -1)
                }
                try? journal?.remove(place)
                for action in done { action() }
            } catch {
                onResult(false)
                failures += 1
                try? await Task.sleep(for: Self.backoff(retryDelay, afterFailures: failures))
            }
        }
    }

    /// Counts `change` as waiting (`n` = 1) or done (-1); the actions to run once done, when
    /// no change of its key waits any more.
    @discardableResult
    private static func count(_ change: SharedChange, in s: inout State, by n: Int) -> [@Sendable () -> Void] {
        switch change {
        case .set(let key, _), .remove(let key, _):
            let left = (s.keys[key] ?? 0) + n
            s.keys[key] = left > 0 ? left : nil
            if left <= 0, let actions = s.whenSent.removeValue(forKey: key) { return actions }
        case .removePrefix, .removeTag:
            s.broad += n
        }
        return []
    }

    /// The pause before retrying after `failures` failures in a row (at least 1): `base`
    /// doubling to 32 ×, times a random factor from 0.5 to 1 (jitter), so that nodes that
    /// failed together do not retry together.
    static func backoff(_ base: Duration, afterFailures failures: Int) -> Duration {
        base * (Double(1 << min(max(failures, 1) - 1, 5)) * Double.random(in: 0.5...1.0))
    }
}
