import Cask
import Metrics
import Synchronization

/// A cache's statistics as swift-metrics: counters, gauges and recorders created once, with fixed
/// dimensions, and brought up to date by ``report()``.
///
/// Nothing runs on the cache's hot path: the metrics are read off
/// ``Cask/CaskCache/statistics`` and ``Cask/CaskCache/loadStatistics`` when ``report()`` is called
/// (``CaskCacheService`` calls it every `metricsInterval`), so a cache without metrics costs
/// nothing, and one with them costs one read of the statistics per interval. Counters grow by
/// what changed since the last report, so their totals are exact.
///
/// Names (`prefix` defaults to `cask`) follow Prometheus' conventions: a counter's name ends
/// in `_total`, a unit is spelled out.
///
/// | metric | kind | dimensions |
/// | --- | --- | --- |
/// | `cask_hits_total`, `cask_misses_total` | counter | `tier`: `memory`, `disk`, `shared` |
/// | `cask_evictions_total` | counter | `cause`: `size`, `count`, `age`, `ttl` |
/// | `cask_loads_total`, `cask_load_failures_total`, `cask_coalesced_waits_total`, `cask_stale_served_total`, `cask_fail_safe_activations_total`, `cask_refreshes_started_total` | counter | |
/// | `cask_load_time_milliseconds_total` | counter (total time in loads) | |
/// | `cask_load_time_p99_seconds` | gauge | |
/// | `cask_writes_total`, `cask_bytes_written_total`, `cask_fsyncs_total`, `cask_checksum_failures_total` | counter | |
/// | `cask_compactions_total`, `cask_compaction_bytes_read_total`, `cask_compaction_bytes_written_total` | counter | |
/// | `cask_shared_tier_failures_total`, `cask_shared_tier_changes_sent_total`, `cask_shared_tier_changes_refused_total`, `cask_shared_tier_notices_applied_total` | counter | |
/// | `cask_items` | gauge | `tier`: `memory`, `disk` |
/// | `cask_bytes` | gauge | `kind`: `live`, `file`, `dead`, `memory` |
/// | `cask_shared_tier_changes_waiting` | gauge (this node's changes not yet sent) | |
/// | `cask_shared_tier_following` | gauge (1 while the node follows the tier's changes live, else 0) | |
/// | `cask_load_duration_seconds` | timer (each load) | `result`: `success`, `failure` |
/// | `cask_sync_duration_seconds` | timer (each `fdatasync`/`fsync`) | `target`: `file`, `directory` |
/// | `cask_compaction_duration_seconds` | timer (each compaction pass) | |
///
/// The timers are fed as the work happens, through ``Cask/CaskCache/observeTimings(_:)``
/// (one `Timer.recordNanoseconds` per load, sync or pass, on the thread that did it); the
/// counters and gauges by ``report()``. A Prometheus exporter's default duration buckets start
/// at 5 ms: give `cask_sync_duration_seconds` finer ones (swift-prometheus:
/// `durationHistogramBuckets`) to see sub-millisecond syncs.
///
/// The `shared` tier's hits and misses and the `cask_shared_tier_` metrics stay 0 for a cache
/// without a ``Cask/CacheOptions/sharedTier``.
///
/// Every metric also carries the `dimensions` given at creation (for example the cache's name).
/// Thread-safe.
public final class CaskMetrics: Sendable {
    /// The cache reported on.
    public let cache: CaskCache
    private let counters: [Counter]
    private let gauges: [Gauge]
    /// Keeps the timers fed while these metrics live.
    private let timing: TimingObservation
    /// The counters' values at the last report.
    private let reported: Mutex<[Int64]>

    /// Creates the metrics (through `factory`, else the bootstrapped `MetricsSystem`).
    public init(cache: CaskCache, prefix: String = "cask", dimensions: [(String, String)] = [], factory: (any MetricsFactory)? = nil) {
        self.cache = cache
        func counter(_ name: String, _ extra: [(String, String)] = []) -> Counter {
            if let factory { return Counter(label: "\(prefix)_\(name)_total", dimensions: dimensions + extra, factory: factory) }
            return Counter(label: "\(prefix)_\(name)_total", dimensions: dimensions + extra)
        }
        func gauge(_ name: String, _ extra: [(String, String)] = []) -> Gauge {
            if let factory { return Gauge(label: "\(prefix)_\(name)", dimensions: dimensions + extra, factory: factory) }
            return Gauge(label: "\(prefix)_\(name)", dimensions: dimensions + extra)
        }
        func timer(_ name: String, _ extra: [(String, String)] = []) -> Metrics.Timer {
            if let factory { return Metrics.Timer(label: "\(prefix)_\(name)", dimensions: dimensions + extra, factory: factory) }
            return Metrics.Timer(label: "\(prefix)_\(name)", dimensions: dimensions + extra)
        }
        let timers = CaskTiming.Operation.allCases.map { timer($0.metricName, $0.metricDimensions) }
        timing = cache.observeTimings { t in
            guard let i = CaskTiming.Operation.allCases.firstIndex(of: t.operation) else { return }
            let c = t.duration.components
            timers[i].recordNanoseconds(c.seconds * 1_000_000_000 + c.attoseconds / 1_000_000_000)
        }
        counters = CounterValue.allCases.map { counter($0.name, $0.dimensions) }
        gauges = GaugeValue.allCases.map { gauge($0.name, $0.dimensions) }
        reported = Mutex(Array(repeating: 0, count: CounterValue.allCases.count))
    }

    /// Brings every metric up to date with the cache's statistics now. Cheap (one read of the
    /// statistics, which takes each memory shard's lock once); safe to call from any thread.
    public func report() {
        let now = MetricSources(cache)
        let counts = CounterValue.allCases.map { Int64($0.value(now)) }
        let deltas = reported.withLock { last in
            defer { last = counts }
            return zip(counts, last).map { max(0, $0 - $1) }
        }
        for (counter, delta) in zip(counters, deltas) where delta > 0 { counter.increment(by: delta) }
        for (gauge, value) in zip(gauges, GaugeValue.allCases) { gauge.record(value.value(now)) }
    }
}

/// The counters ``CaskMetrics`` keeps, and where each one's total comes from.
enum CounterValue: CaseIterable {
    case memoryHits, diskHits, memoryMisses, diskMisses
    case evictedBySize, evictedByCount, evictedByAge, expired
    case loads, loadFailures, coalescedWaits, staleServed, failSafeActivations, refreshesStarted, loadTime
    case writes, bytesWritten, fsyncs, checksumFailures, compactions, compactionBytesRead, compactionBytesWritten
    case sharedHits, sharedMisses, sharedFailures, sharedChangesSent, sharedChangesRefused, sharedNoticesApplied

    var name: String {
        switch self {
        case .memoryHits, .diskHits, .sharedHits: "hits"
        case .memoryMisses, .diskMisses, .sharedMisses: "misses"
        case .evictedBySize, .evictedByCount, .evictedByAge, .expired: "evictions"
        case .loads: "loads"
        case .loadFailures: "load_failures"
        case .coalescedWaits: "coalesced_waits"
        case .staleServed: "stale_served"
        case .failSafeActivations: "fail_safe_activations"
        case .refreshesStarted: "refreshes_started"
        case .loadTime: "load_time_milliseconds"
        case .writes: "writes"
        case .bytesWritten: "bytes_written"
        case .fsyncs: "fsyncs"
        case .checksumFailures: "checksum_failures"
        case .compactions: "compactions"
        case .compactionBytesRead: "compaction_bytes_read"
        case .compactionBytesWritten: "compaction_bytes_written"
        case .sharedFailures: "shared_tier_failures"
        case .sharedChangesSent: "shared_tier_changes_sent"
        case .sharedChangesRefused: "shared_tier_changes_refused"
        case .sharedNoticesApplied: "shared_tier_notices_applied"
        }
    }

    var dimensions: [(String, String)] {
        switch self {
        case .memoryHits, .memoryMisses: [("tier", "memory")]
        case .diskHits, .diskMisses: [("tier", "disk")]
        case .sharedHits, .sharedMisses: [("tier", "shared")]
        case .evictedBySize: [("cause", "size")]
        case .evictedByCount: [("cause", "count")]
        case .evictedByAge: [("cause", "age")]
        case .expired: [("cause", "ttl")]
        default: []
        }
    }

    func value(_ m: MetricSources) -> Int {
        let s = m.cache, l = m.loads, t = m.shared
        return switch self {
        case .memoryHits: s.memoryHits
        case .diskHits: s.disk.hits
        case .memoryMisses: s.memoryMisses
        case .diskMisses: s.disk.misses
        case .evictedBySize: s.disk.evictionsBySize
        case .evictedByCount: s.disk.evictionsByCount
        case .evictedByAge: s.disk.evictionsByAge
        case .expired: s.disk.expirations
        case .loads: l.loads
        case .loadFailures: l.loadFailures
        case .coalescedWaits: l.coalescedWaits
        case .staleServed: l.staleValuesServed
        case .failSafeActivations: l.failSafeActivations
        case .refreshesStarted: l.refreshesStarted
        case .loadTime: Int(l.totalLoadTime.components.seconds * 1000 + l.totalLoadTime.components.attoseconds / 1_000_000_000_000_000)
        case .writes: s.disk.writes
        case .bytesWritten: s.disk.bytesWritten
        case .fsyncs: s.disk.segmentSyncs
        case .checksumFailures: s.disk.corruptRecords
        case .compactions: s.disk.compactions
        case .compactionBytesRead: s.disk.compactionBytesRead
        case .compactionBytesWritten: s.disk.compactionBytesWritten
        case .sharedHits: t?.hits ?? 0
        case .sharedMisses: t?.misses ?? 0
        case .sharedFailures: t?.failures ?? 0
        case .sharedChangesSent: t?.changesSent ?? 0
        case .sharedChangesRefused: t?.changesRefused ?? 0
        case .sharedNoticesApplied: t?.noticesApplied ?? 0
        }
    }
}

/// The gauges ``CaskMetrics`` keeps, and where each one's value comes from.
enum GaugeValue: CaseIterable {
    case memoryItems, diskItems, liveBytes, fileBytes, deadBytes, memoryCost, loadTimeP99, sharedChangesWaiting, sharedFollowing

    var name: String {
        switch self {
        case .memoryItems, .diskItems: "items"
        case .liveBytes, .fileBytes, .deadBytes, .memoryCost: "bytes"
        case .loadTimeP99: "load_time_p99_seconds"
        case .sharedChangesWaiting: "shared_tier_changes_waiting"
        case .sharedFollowing: "shared_tier_following"
        }
    }

    var dimensions: [(String, String)] {
        switch self {
        case .memoryItems: [("tier", "memory")]
        case .diskItems: [("tier", "disk")]
        case .liveBytes: [("kind", "live")]
        case .fileBytes: [("kind", "file")]
        case .deadBytes: [("kind", "dead")]
        case .memoryCost: [("kind", "memory")]
        case .loadTimeP99, .sharedChangesWaiting, .sharedFollowing: []
        }
    }

    func value(_ m: MetricSources) -> Double {
        let s = m.cache, l = m.loads
        return switch self {
        case .memoryItems: Double(s.memoryItems)
        case .diskItems: Double(s.disk.itemCount)
        case .liveBytes: Double(s.disk.liveBytes)
        case .fileBytes: Double(s.disk.fileBytes)
        case .deadBytes: Double(s.disk.deadBytes)
        case .memoryCost: Double(s.memoryCost)
        case .loadTimeP99: Double(l.p99LoadTime.components.seconds) + Double(l.p99LoadTime.components.attoseconds) / 1e18
        case .sharedChangesWaiting: Double(m.shared?.changesWaiting ?? 0)
        case .sharedFollowing: m.shared?.isFollowing == true ? 1 : 0
        }
    }
}

/// What one report reads off the cache.
struct MetricSources {
    let cache: CacheStatistics
    let loads: LoadStatistics
    let shared: SharedTierStatistics?

    init(_ c: CaskCache) {
        cache = c.statistics
        loads = c.loadStatistics
        shared = c.sharedTierStatistics
    }
}

extension CaskTiming.Operation {
    /// The timer each timed operation feeds.
    var metricName: String {
        switch self {
        case .load, .failedLoad: "load_duration_seconds"
        case .fileSync, .directorySync: "sync_duration_seconds"
        case .compaction: "compaction_duration_seconds"
        }
    }

    var metricDimensions: [(String, String)] {
        switch self {
        case .load: [("result", "success")]
        case .failedLoad: [("result", "failure")]
        case .fileSync: [("target", "file")]
        case .directorySync: [("target", "directory")]
        case .compaction: []
        }
    }
}
