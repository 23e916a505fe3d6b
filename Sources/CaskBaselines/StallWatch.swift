import Foundation

/// Tells a stall of the machine from a stall of the engine being measured: a thread that
/// sleeps 1 ms at a time and notes every wake-up at least `threshold` late. A put that was slow
/// while this thread was late too waited for the machine (a paused virtual CPU, a host I/O
/// stall, no free core), not for the engine alone. Used by `cask-harness churn` and
/// `cask-versus churn`, which report how many of their slow puts overlap a late wake-up.
/// Thread-safe.
public final class StallWatch: @unchecked Sendable {
    // @unchecked: `stalls` and `running` are only touched under `lock`.
    private var stalls: [(UInt64, UInt64)] = []
    private var running = true
    private let lock = NSLock()
    private let threshold: UInt64

    /// Starts watching; `threshold` in nanoseconds (default 5 ms).
    public init(threshold: UInt64 = 5_000_000) {
        self.threshold = threshold
        Thread { [self] in watch() }.start()
    }

    /// `CLOCK_MONOTONIC` in nanoseconds: the clock the intervals given to ``overlapping(_:)``
    /// must be read from.
    @inline(__always)
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    private func watch() {
        while lock.withLock({ running }) {
            let before = Self.now()
            usleep(1000)
            let after = Self.now()
            if after - before >= threshold + 1_000_000 { lock.withLock { stalls.append((before + 1_000_000, after)) } }
        }
    }

    /// Stops the thread (at its next wake-up).
    public func stop() { lock.withLock { running = false } }

    /// How many late wake-ups were seen.
    public var count: Int { lock.withLock { stalls.count } }

    /// How many of `intervals` ((start, end) in ``now()`` nanoseconds) overlap a late wake-up.
    public func overlapping(_ intervals: [(UInt64, UInt64)]) -> Int {
        let seen = lock.withLock { stalls }
        return intervals.filter { i in seen.contains { $0.0 < i.1 && i.0 < $0.1 } }.count
    }
}
