/// A cheap pseudo-random generator (SplitMix64) for sampling, seeded once from the system's.
///
/// The system generator can cost a system call per number: 1,024 of them made one sample of the
/// index take 600 µs under the store's lock (measured). Not for anything that needs
/// unpredictability. Seeded explicitly, it is also the deterministic generator of the test
/// support (`CaskTesting.SplitMix`), so that a failure reproduces from its seed.
package struct FastRandom: RandomNumberGenerator, Sendable {
    @usableFromInline var state: UInt64

    package init() {
        var system = SystemRandomNumberGenerator()
        state = system.next()
    }

    package init(seed: UInt64) { state = seed }

    @inlinable
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
