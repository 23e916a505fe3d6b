import Synchronization

/// What a cache's loader API did, since the cache was opened (see <doc:LoadingValues>).
public struct LoadStatistics: Sendable, Equatable {
    /// Loads started (one per key at a time, however many callers asked).
    public var loads: Int
    /// Loads whose loader threw (cancelled loads not included).
    public var loadFailures: Int
    /// Loads cancelled because every caller left (cancelled or timed out).
    public var loadsCancelled: Int
    /// Total time the finished loads took (real time, loader and store).
    public var totalLoadTime: Duration
    /// The 99th percentile of the last 1,024 finished loads' times; zero before the first.
    public var p99LoadTime: Duration
    /// Callers that waited for a load another caller had started.
    public var coalescedWaits: Int
    /// Stale values served (refresh too slow, loader failed, or throttled).
    public var staleValuesServed: Int
    /// Stale values served because the loader failed or passed its hard timeout.
    public var failSafeActivations: Int
    /// Background refreshes started: of stale values, and eager refreshes of fresh ones.
    public var refreshesStarted: Int
    /// Loaded values the cache could not store (the callers still got them; the error is logged).
    public var storeFailures: Int
}

/// Counters behind ``LoadStatistics`` (relaxed atomics), and the recent load times.
final class LoadStatisticsRecorder: Sendable {
    let loads = Atomic<Int>(0)
    let loadFailures = Atomic<Int>(0)
    let loadsCancelled = Atomic<Int>(0)
    let coalescedWaits = Atomic<Int>(0)
    let staleValuesServed = Atomic<Int>(0)
    let failSafeActivations = Atomic<Int>(0)
    let refreshesStarted = Atomic<Int>(0)
    let storeFailures = Atomic<Int>(0)
    private let totalNanoseconds = Atomic<Int>(0)
    private static let window = 1024
    private let recent = Locked<(times: [Int], next: Int)>(([], 0))

    func recordLoadTime(_ d: Duration) {
        let ns = Int(d.components.seconds) * 1_000_000_000 + Int(d.components.attoseconds / 1_000_000_000)
        totalNanoseconds.add(ns, ordering: .relaxed)
        recent.withLock { r in
            if r.times.count < Self.window { r.times.append(ns) } else { r.times[r.next] = ns }
            r.next = (r.next + 1) % Self.window
        }
    }

    var snapshot: LoadStatistics {
        let times = recent.withLock { $0.times }.sorted()
        let p99 = times.isEmpty ? 0 : times[min(times.count - 1, (times.count * 99 + 99) / 100 - 1)]
        return LoadStatistics(
            loads: loads.load(ordering: .relaxed), loadFailures: loadFailures.load(ordering: .relaxed),
            loadsCancelled: loadsCancelled.load(ordering: .relaxed),
            totalLoadTime: .nanoseconds(totalNanoseconds.load(ordering: .relaxed)), p99LoadTime: .nanoseconds(p99),
            coalescedWaits: coalescedWaits.load(ordering: .relaxed), staleValuesServed: staleValuesServed.load(ordering: .relaxed),
            failSafeActivations: failSafeActivations.load(ordering: .relaxed), refreshesStarted: refreshesStarted.load(ordering: .relaxed),
            storeFailures: storeFailures.load(ordering: .relaxed))
    }
}
