import Foundation
import Synchronization
import CaskSupport

/// A ``CaskCache``'s link to its ``SharedTier``: versions this node's changes, sends them
/// through the ``SharedOutbox``, bounds every read with the timeout and the
/// ``CircuitBreaker``, and follows the tier's changes, handing each one made by another node
/// to the cache to apply to its local layers. Thread-safe.
final class SharedTierLink: Sendable {
    let tier: any SharedTier
    let node: UInt32
    private let timeout: Duration
    /// ``CacheOptions/sharedTierRetryDelay`` and ``CacheOptions/sharedTierLoadLease``.
    private let retryDelay: Duration, loadLease: Duration
    private let clock: WallClock
    private let breaker: CircuitBreaker
    private let outbox: SharedOutbox
    /// The last version this node gave out (µs), so that versions grow on this node.
    private let lastVersion = Locked<Int64>(0)
    /// Notices applied and changes this node made so far: a read that saw it change while it
    /// ran does not keep its copy.
    private let noticesApplied = Atomic<Int>(0)
    /// The cursor of the last notice applied.
    private let cursor = Locked<String?>(nil)
    private let follower = Locked<Task<Void, Never>?>(nil)
    /// Whether the tier's changes are followed as they happen (``SharedNotice/live(cursor:)``):
    /// reads go through the tier only then, so that no copy is kept that a missed change
    /// would leave stale.
    private let isLive = Atomic<Bool>(false)
    private let counters = SharedTierCounters()
    /// Where the outbox's sender (and claims' releases) and the follower run: off Swift's
    /// pool (see ``SharedTierExecutor``), on two queues, so that a slow `fdatasync` of the
    /// outbox's journal does not hold up the following. Reads and claims run on the caller's
    /// task: it waits for them anyway, the deadline's timer is not on the pool, and a hop to a
    /// queue and back cost a read-through about 70 µs (`tools/bench-shared-tier.sh`).
    private let background: SharedTierExecutor
    private let following = SharedTierExecutor(label: "cask.shared-tier.follower")

    /// Opens the link; its outbox's journal lives in `directory` (the cache's folder).
    init(tier: any SharedTier, options: CacheOptions, directory: String) throws(CaskError) {
        self.tier = tier
        self.node = options.sharedTierNode
        self.timeout = options.sharedTierTimeout
        self.retryDelay = options.sharedTierRetryDelay
        self.loadLease = options.sharedTierLoadLease ?? .zero
        self.clock = options.disk.clock
        let breaker = CircuitBreaker(openFor: options.sharedTierRetryDelay)
        self.breaker = breaker
        // A send is in the background: it may take 20 times a read's timeout (at least 5 s,
        // at most a minute) before it is given up and retried, so a large value still gets through.
        let timeout = min(max(options.sharedTierTimeout * 20, .seconds(5)), .seconds(60))
        let clock = options.disk.clock, counters = counters, background = SharedTierExecutor(label: "cask.shared-tier.outbox")
        self.background = background
        let journal = options.disk.isReadOnly ? nil : try OutboxJournal(directory: directory, options: options.disk)
        self.outbox = try SharedOutbox(journal: journal, retryDelay: options.sharedTierRetryDelay, executor: background, send: { change in
            try await withDeadline(timeout, on: background) { try await tier.apply(change) }
        }, onResult: { ok in
            if ok { breaker.noteSuccess(); counters.sent.add(1, ordering: .relaxed) } else {
                breaker.noteFailure(at: clock.now)
                counters.failures.add(1, ordering: .relaxed)
            }
        })
    }

    /// A version for a change made now on this node: later than every one it gave out before.
    func nextVersion() -> SharedVersion {
        let now = Self.microsecondsNow()
        let ms = lastVersion.withLock { last -> Int64 in
            last = max(now, last < Int64.max ? last + 1 : last)
            return last
        }
        return SharedVersion(microseconds: ms, node: node)
    }

    /// Notes a version seen from another node (a hybrid logical clock): this node's next
    /// version is later, so a change made after seeing another node's orders after it even
    /// when the clocks disagree or both fall in one millisecond.
    ///
    /// A version more than ``Self/maximumSkew`` ahead of this node's clock is not followed (a
    /// forged or broken record must not drag every node's versions into the future).
    func observe(_ version: SharedVersion) {
        guard version.microseconds <= Self.microsecondsNow() &+ Self.maximumSkew else { return }
        lastVersion.withLock { $0 = max($0, version.microseconds) }
    }

    /// How far ahead of this node's clock an observed version may be (µs): one hour.
    static let maximumSkew: Int64 = 3_600_000_000

    /// The wall clock in microseconds since 1970 (versions: two nodes' writes a millisecond
    /// apart still order by time).
    static func microsecondsNow() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1_000
    }

    /// Queues a change this node made (its local layers already hold it).
    /// - Throws: what writing the outbox's journal throws.
    func send(_ change: SharedChange) throws(CaskError) {
        noticesApplied.add(1, ordering: .releasing)   // a read that overlaps it keeps no copy
        try outbox.enqueue(change)
    }

    /// The tier's entry for `key`, or nil: when it has none, when this node has a change of
    /// it waiting to be sent, when the breaker is open, or when the tier fails or passes the
    /// timeout (which opens the breaker), or while the tier's changes are not followed live.
    /// Never throws. `mark` tells ``isUnchanged(since:)``
    /// whether a notice was applied while the read ran.
    func entry(forKey key: String) async -> (entry: SharedEntry, mark: Int)? {
        let now = clock.now
        guard isLive.load(ordering: .acquiring), !outbox.isWaiting(key), breaker.allows(at: now) else { return nil }
        let mark = noticesApplied.load(ordering: .acquiring)
        let tier = self.tier
        do {
            guard let found = try await withDeadline(timeout, { try await tier.entry(forKey: key) }) else {
                counters.misses.add(1, ordering: .relaxed)
                return nil
            }
            breaker.noteSuccess()
            observe(found.version)
            guard found.expiry == 0 || found.expiry > clock.now else { return nil }
            counters.hits.add(1, ordering: .relaxed)
            return (found, mark)
        } catch {
            breaker.noteFailure(at: clock.now)
            counters.failures.add(1, ordering: .relaxed)
            return nil
        }
    }

    /// What a claim of a key's load came to.
    enum LoadClaim: Equatable {
        /// This node holds it: load, then ``releaseWhenSent(_:token:)``.
        case granted(UInt64)
        /// Another node holds it: wait for its value.
        case heldElsewhere
        /// The tier cannot be asked (breaker open, not following, failed, timed out): load.
        case unavailable
    }

    /// Claims the load of `key` for `lease` (see ``CacheOptions/sharedTierLoadLease``), within
    /// the timeout. Never throws.
    func claimLoad(of key: String, for lease: Duration) async -> LoadClaim {
        guard isLive.load(ordering: .acquiring), breaker.allows(at: clock.now) else { return .unavailable }
        let tier = self.tier
        do {
            let token = try await withDeadline(timeout) { try await tier.claimLoad(of: key, for: lease) }
            breaker.noteSuccess()
            return token.map(LoadClaim.granted) ?? .heldElsewhere
        } catch {
            breaker.noteFailure(at: clock.now)
            counters.failures.add(1, ordering: .relaxed)
            return .unavailable
        }
    }

    /// Releases the claim `token` of `key` once no change of `key` waits to be sent (so the
    /// nodes that waited find the value), or at once if none waits. A failed release is
    /// retried (the retry delay doubling to 32 ×, with jitter) until the lease has passed since
    /// now: a claim left behind by an outage would hold up every load of the key for the lease.
    func releaseWhenSent(_ key: String, token: UInt64) {
        let tier = self.tier, timeout = self.timeout, executor = background
        let retryDelay = self.retryDelay, until = ContinuousClock.now + loadLease
        outbox.whenSent(key) {
            Task.detached(executorPreference: executor) {
                var failures = 0
                while (try? await withDeadline(timeout, on: executor) { try await tier.releaseLoad(of: key, token: token) }) == nil,
                      ContinuousClock.now < until {
                    failures += 1
                    try? await Task.sleep(for: SharedOutbox.backoff(retryDelay, afterFailures: failures))
                }
            }
        }
    }

    /// Counts a get-or-load answered with another node's value.
    func noteLoadFromOtherNode() { counters.loadsFromOtherNodes.add(1, ordering: .relaxed) }

    /// Whether no other node's change was applied and this node made no change since `mark`
    /// was taken, and none of `key` waits to be sent.
    func isUnchanged(since mark: Int, key: String) -> Bool {
        noticesApplied.load(ordering: .acquiring) == mark && !outbox.isWaiting(key)
    }

    /// Starts following the tier's changes: `apply` gets each notice of a change another node
    /// made, and every ``SharedNotice/historyLost(cursor:)``, in order, on one task.
    func follow(applying apply: @escaping @Sendable (SharedNotice) async -> Void) {
        let task = Task.detached(executorPreference: following) { [self] in
            for await notice in tier.changes(after: cursor.withLock { $0 }) {
                switch notice {
                case .live(let c):
                    if let c { cursor.withLock { $0 = c } }
                    isLive.store(true, ordering: .releasing)
                    continue
                case .interrupted:
                    isLive.store(false, ordering: .releasing)
                    continue
                case .change(let change, _) where change.version.node == node:
                    cursor.withLock { $0 = notice.cursor }
                    continue
                case .change(let change, _): observe(change.version)
                default: break
                }
                noticesApplied.add(1, ordering: .releasing)
                await apply(notice)
                counters.notices.add(1, ordering: .relaxed)
                cursor.withLock { $0 = notice.cursor }
            }
        }
        follower.withLock { $0 = task }
    }

    /// The cursor of the last notice handled (for tests: whether a node has caught up).
    var followedCursor: String? { cursor.withLock { $0 } }

    /// The link's counters.
    var statistics: SharedTierStatistics {
        SharedTierStatistics(hits: counters.hits.load(ordering: .relaxed), misses: counters.misses.load(ordering: .relaxed),
                             failures: counters.failures.load(ordering: .relaxed), changesSent: counters.sent.load(ordering: .relaxed),
                             changesWaiting: outbox.count, noticesApplied: counters.notices.load(ordering: .relaxed),
                             changesRefused: outbox.refused.load(ordering: .relaxed),
                             loadsFromOtherNodes: counters.loadsFromOtherNodes.load(ordering: .relaxed), isFollowing: isLive.load(ordering: .relaxed))
    }

    /// Stops following and sending.
    func close() throws(CaskError) {
        follower.withLock { $0?.cancel() }
        try outbox.close()
    }
}

extension SharedNotice {
    /// The cursor to resume after this notice.
    var cursor: String? {
        switch self {
        case .change(_, let c): c
        case .historyLost(let c), .live(let c): c
        case .interrupted: nil
        }
    }
}

/// The link's relaxed counters.
final class SharedTierCounters: Sendable {
    let hits = Atomic<Int>(0), misses = Atomic<Int>(0), failures = Atomic<Int>(0)
    let sent = Atomic<Int>(0), notices = Atomic<Int>(0), loadsFromOtherNodes = Atomic<Int>(0)
}
