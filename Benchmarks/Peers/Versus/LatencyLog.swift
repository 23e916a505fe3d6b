import Foundation

/// Every put's latency, kept exactly: nanoseconds in a buffer allocated before the run (no
/// allocation while timing), and the number of puts completed in each fixed window of time.
struct LatencyLog {
    /// One entry per recorded put, in nanoseconds (saturating at about 4.3 s).
    private(set) var durations: [UInt32]
    /// Puts recorded so far.
    private(set) var count = 0
    /// Puts completed in each window since `origin`; the last window is usually partial.
    private(set) var windows: [UInt32]
    let windowNanoseconds: UInt64
    let origin: UInt64
    /// Puts over 10 ms: (start, end), to set against the machine's stalls (StallWatch).
    private(set) var slowPuts: [(UInt64, UInt64)] = []

    /// A log for up to `capacity` puts, windows of `windowNanoseconds` counted from `origin`.
    init(capacity: Int, windowNanoseconds: UInt64, origin: UInt64, expectedSeconds: Double = 600) {
        durations = [UInt32](repeating: 0, count: capacity)
        self.windowNanoseconds = windowNanoseconds
        self.origin = origin
        windows = []
        windows.reserveCapacity(Int(expectedSeconds * 1e9 / Double(windowNanoseconds)))
        slowPuts.reserveCapacity(1024)
    }

    /// Records one put that ran from `start` to `end` (monotonic nanoseconds).
    @inline(__always)
    mutating func record(start: UInt64, end: UInt64) {
        durations[count] = UInt32(clamping: end &- start)
        count += 1
        if end &- start > 10_000_000 { slowPuts.append((start, end)) }
        let window = Int((end &- origin) / windowNanoseconds)
        while windows.count <= window { windows.append(0) }
        windows[window] &+= 1
    }

    /// The recorded durations, sorted (a copy; the log is unchanged).
    func sortedDurations() -> [UInt32] {
        var sorted = Array(durations[0..<count])
        sorted.sort()
        return sorted
    }
}

/// Exact latency figures of a run, from every put's duration (nanoseconds).
struct LatencySummary: Codable {
    var p50: UInt32
    var p90: UInt32
    var p99: UInt32
    var p999: UInt32
    var p9999: UInt32
    var max: UInt32
    /// Puts slower than 1 ms and than 10 ms.
    var over1ms: Int
    var over10ms: Int

    init(sorted: [UInt32]) {
        p50 = Self.percentile(sorted, 50)
        p90 = Self.percentile(sorted, 90)
        p99 = Self.percentile(sorted, 99)
        p999 = Self.percentile(sorted, 99.9)
        p9999 = Self.percentile(sorted, 99.99)
        max = sorted.last ?? 0
        over1ms = sorted.count - Self.firstIndex(above: 1_000_000, in: sorted)
        over10ms = sorted.count - Self.firstIndex(above: 10_000_000, in: sorted)
    }

    /// The nearest-rank percentile `q` (0...100) of `sorted`; 0 when empty.
    static func percentile(_ sorted: [UInt32], _ q: Double) -> UInt32 {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((q / 100 * Double(sorted.count)).rounded(.up))
        return sorted[Swift.min(sorted.count - 1, Swift.max(0, rank - 1))]
    }

    /// The index of the first value greater than `limit` (binary search).
    static func firstIndex(above limit: UInt32, in sorted: [UInt32]) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] > limit { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// Points of the latency distribution for a plot of its tail: the percentiles
    /// 100 × (1 − 10^(−k/10)) for k = 0, 1, … down to one put in `sorted.count`, the named
    /// percentiles, and the maximum (percentile 100).
    static func curve(_ sorted: [UInt32]) -> [LatencyPoint] {
        guard !sorted.isEmpty else { return [] }
        let steps = Int((10 * log10(Double(sorted.count))).rounded(.down))
        var qs = (0...steps).map { 100 * (1 - pow(10, -Double($0) / 10)) }
        qs += [50, 90, 99, 99.9, 99.99]
        let unique = Set(qs.map { ($0 * 1e6).rounded() / 1e6 }).sorted()
        return unique.map { LatencyPoint(percentile: $0, nanoseconds: percentile(sorted, $0)) } +
            [LatencyPoint(percentile: 100, nanoseconds: sorted[sorted.count - 1])]
    }
}

/// One point of a latency distribution.
struct LatencyPoint: Codable {
    var percentile: Double
    var nanoseconds: UInt32
}

/// Puts per window: the slowest full window against the median one.
struct WindowSummary: Codable {
    var windowMilliseconds: Int
    var slowestWindowPuts: Int
    var medianWindowPuts: Int

    /// The last window is left out when there are others (it is usually partial).
    init(windows: [UInt32], windowMilliseconds: Int) {
        self.windowMilliseconds = windowMilliseconds
        let full = windows.count > 1 ? Array(windows.dropLast()) : windows
        let sorted = full.sorted()
        slowestWindowPuts = Int(sorted.first ?? 0)
        medianWindowPuts = sorted.isEmpty ? 0 : Int(sorted[sorted.count / 2])
    }
}
