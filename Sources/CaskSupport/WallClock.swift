#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Milliseconds since the Unix epoch from `clockID` (no allocation, one vDSO call).
@inlinable @inline(__always)
func wallClockMilliseconds(_ clockID: clockid_t) -> Int64 {
    var ts = timespec()
    clock_gettime(clockID, &ts)
    return Int64(ts.tv_sec) &* 1000 &+ Int64(ts.tv_nsec) / 1_000_000
}

/// The clock behind ``WallClock/system``: `CLOCK_REALTIME_COARSE` on Linux (the time of the
/// last kernel tick, read without the time-stamp counter), `CLOCK_REALTIME` elsewhere.
@usableFromInline
package var coarseRealtimeClockID: clockid_t {
    #if os(Linux)
    CLOCK_REALTIME_COARSE
    #else
    CLOCK_REALTIME
    #endif
}

/// A source of wall-clock time in milliseconds since the Unix epoch. Tests substitute their own.
///
/// Every access time, write time and expiry of a cache or store comes from its clock, so the
/// clock decides how finely "least recently used", age limits and times to live are told apart.
///
/// Thread safety: `milliseconds` is called from any thread, often under a cache's lock: it must
/// be thread-safe, fast and must not call back into the cache.
public struct WallClock: Sendable {
    /// Returns the current time in milliseconds since 1970-01-01 00:00:00 UTC.
    public let milliseconds: @Sendable () -> Int64
    /// -1: `milliseconds` decides; otherwise the system clock to read directly (the hot paths
    /// then make no indirect call).
    @usableFromInline let systemClockID: clockid_t

    /// A clock that reads the time from `milliseconds`.
    public init(milliseconds: @escaping @Sendable () -> Int64) {
        self.milliseconds = milliseconds
        self.systemClockID = -1
    }

    private init(systemClock id: clockid_t) {
        self.milliseconds = { wallClockMilliseconds(id) }
        self.systemClockID = id
    }

    /// The system's real-time clock as of its last tick: on Linux `CLOCK_REALTIME_COARSE`,
    /// which advances in steps of the kernel's tick (1 to 4 ms; `clock_getres` tells) and costs
    /// about a quarter of a precise reading (6 ns against 25 ns on a 2-core VM). Every cache and
    /// store uses it unless given another clock: times are then told apart to the tick, and an
    /// age limit or time to live may run up to one tick long (longer while the kernel's tick runs
    /// late on a busy machine: lags of 7-8 ms seen on a loaded 2-core VM). Elsewhere `CLOCK_REALTIME`.
    public static let system = WallClock(systemClock: coarseRealtimeClockID)

    /// The system's real-time clock read to the millisecond (`CLOCK_REALTIME`): for a store or
    /// cache whose times must be told apart below the kernel's tick, at the cost of a
    /// time-stamp-counter read on every call.
    public static let precise = WallClock(systemClock: CLOCK_REALTIME)

    /// The current time in milliseconds: the system clock read inline when this is one of the
    /// system clocks, else `milliseconds()`.
    @inlinable @inline(__always)
    package var now: Int64 {
        systemClockID >= 0 ? wallClockMilliseconds(systemClockID) : milliseconds()
    }
}

extension Duration {
    /// Whole milliseconds, rounded toward zero; saturates at `Int64.min` / `Int64.max` for
    /// durations beyond ±292 million years.
    @inlinable package var milliseconds: Int64 {
        let c = components
        let (ms, overflow) = c.seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return c.seconds < 0 ? .min : .max }
        let (sum, overflow2) = ms.addingReportingOverflow(c.attoseconds / 1_000_000_000_000_000)
        if overflow2 { return c.seconds < 0 ? .min : .max }
        return sum
    }
}
