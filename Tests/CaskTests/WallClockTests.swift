import Foundation
import Testing
@testable import Cask
#if canImport(Glibc)
import Glibc
#endif

/// `WallClock.system` reads the kernel's coarse real-time clock: never ahead of the precise
/// clock, and behind it by about one tick; `WallClock.precise` and a custom clock are read as
/// they say.
@Suite struct WallClockTests {
    /// One kernel tick of `CLOCK_REALTIME_COARSE`, in milliseconds (rounded up).
    static var tickMilliseconds: Int64 {
        var resolution = timespec()
        clock_getres(coarseRealtimeClockID, &resolution)
        return (Int64(resolution.tv_sec) * 1_000_000_000 + Int64(resolution.tv_nsec) + 999_999) / 1_000_000
    }

    /// `CLOCK_REALTIME` in whole milliseconds, read here (not through Cask, and not through
    /// `Date`, whose `Double` seconds can round up across a millisecond).
    static func preciseMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// Never ahead of the precise clock. How far behind depends on how late the kernel's tick
    /// runs (a median of 7 ms with this suite running on 2 cores, against the 4 ms tick), so no
    /// bound on the lag is asserted here: that would be a timing test.
    @Test func systemClockIsNeverAheadOfThePreciseClock() {
        let tick = Self.tickMilliseconds
        #expect(tick >= 1 && tick <= 10)
        for _ in 0..<1_000 {
            let coarse = WallClock.system.now
            let viaClosure = WallClock.system.milliseconds()
            let after = Self.preciseMilliseconds()
            #expect(coarse <= after && viaClosure <= after && coarse <= viaClosure)
        }
    }

    @Test func systemClockAdvances() {
        let start = WallClock.system.now
        var waited = 0
        while WallClock.system.now == start && waited < 2_000 { usleep(1_000); waited += 1 }
        #expect(WallClock.system.now > start)
    }

    @Test func preciseClockIsWithinTheCall() {
        for _ in 0..<1_000 {
            let before = Self.preciseMilliseconds()
            let precise = WallClock.precise.now
            let after = Self.preciseMilliseconds()
            #expect(precise >= before && precise <= after)
        }
    }

    @Test func aCustomClockIsCalledForEveryReading() {
        let calls = Locked(0)
        let clock = WallClock { calls.withLock { $0 += 1; return Int64($0) * 7 } }
        #expect(clock.now == 7)
        #expect(clock.milliseconds() == 14)
        #expect(clock.now == 21)
    }
}
