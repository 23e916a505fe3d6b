import Foundation
import Testing
@testable import Cask
#if canImport(Glibc)
import Glibc
#endif

/// `WallClock.system` reads the kernel's coarse real-time clock: never ahead of the precise
/// clock, and behind it by at most one tick; `WallClock.precise` and a custom clock are read as
/// they say.
@Suite struct WallClockTests {
    /// One kernel tick of `CLOCK_REALTIME_COARSE`, in milliseconds (rounded up).
    static var tickMilliseconds: Int64 {
        var resolution = timespec()
        clock_getres(coarseRealtimeClockID, &resolution)
        return (Int64(resolution.tv_sec) * 1_000_000_000 + Int64(resolution.tv_nsec) + 999_999) / 1_000_000
    }

    static func preciseMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    @Test func systemClockLagsThePreciseClockByAtMostOneTick() {
        let tick = Self.tickMilliseconds
        #expect(tick >= 1 && tick <= 10)
        for _ in 0..<1_000 {
            let before = Self.preciseMilliseconds()
            let coarse = WallClock.system.now
            let viaClosure = WallClock.system.milliseconds()
            let after = Self.preciseMilliseconds()
            #expect(coarse <= after && viaClosure <= after)
            #expect(coarse >= before - tick - 1 && viaClosure >= before - tick - 1)
        }
    }

    @Test func systemClockAdvances() {
        let start = WallClock.system.now
        usleep(UInt32(Self.tickMilliseconds * 3 * 1000))
        #expect(WallClock.system.now > start)
    }

    @Test func preciseClockIsWithinTheCall() {
        for _ in 0..<1_000 {
            let before = Self.preciseMilliseconds()
            let precise = WallClock.precise.now
            let after = Self.preciseMilliseconds()
            #expect(precise >= before && precise <= after + 1)
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
