#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The end of one slice's time budget. Reads the monotonic clock (a vDSO call, about 20 ns)
/// only every 8 steps. Inlinable: slices check it after every step.
package struct SliceDeadline {
    @usableFromInline let end: UInt64

    package init(budget: UInt64) {
        end = Self.now() + budget
    }

    /// True once the budget is spent; `steps` is how many steps were taken so far.
    @inlinable
    package func isPast(after steps: Int) -> Bool {
        steps & 7 == 0 && Self.now() >= end
    }

    @inlinable
    static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }
}
