#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Milliseconds since the Unix epoch from `CLOCK_REALTIME` (no allocation, one vDSO call).
func currentWallClockMilliseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

/// A source of wall-clock time in milliseconds since the Unix epoch. Tests substitute their own.
///
/// Thread safety: `milliseconds` is called from any thread, often under a cache's lock: it must
/// be thread-safe, fast and must not call back into the cache.
public struct WallClock: Sendable {
    /// Returns the current time in milliseconds since 1970-01-01 00:00:00 UTC.
    public let milliseconds: @Sendable () -> Int64

    /// A clock that reads the time from `milliseconds`.
    public init(milliseconds: @escaping @Sendable () -> Int64) { self.milliseconds = milliseconds }
    /// The system's real-time clock.
    public static let system = WallClock { currentWallClockMilliseconds() }
}

extension Duration {
    /// Whole milliseconds, rounded toward zero; saturates at `Int64.min` / `Int64.max` for
    /// durations beyond ±292 million years.
    @usableFromInline var milliseconds: Int64 {
        let c = components
        let (ms, overflow) = c.seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return c.seconds < 0 ? .min : .max }
        let (sum, overflow2) = ms.addingReportingOverflow(c.attoseconds / 1_000_000_000_000_000)
        if overflow2 { return c.seconds < 0 ? .min : .max }
        return sum
    }
}
