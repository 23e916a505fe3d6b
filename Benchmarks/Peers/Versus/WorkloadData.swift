/// The fixed-seed data every engine sees: 16-byte keys, values that are half random and half a
/// repeated byte (LZ4 and Snappy halve them), and the random orders.
struct WorkloadData {
    static let valueVariants = 64

    /// Present keys: "k" and 15 digits.
    let keys: [String]
    /// Keys never written: "m" and 15 digits.
    let missing: [String]
    /// A permutation of 0..<keys.count (fixed seed).
    let shuffled: [Int]

    init(count: Int) {
        keys = (0..<count).map { Self.key("k", $0) }
        missing = (0..<count).map { Self.key("m", $0) }
        var order = Array(0..<count)
        var rng = XorShift(seed: 42)
        order.shuffle(using: &rng)
        shuffled = order
    }

    static func key(_ prefix: String, _ i: Int) -> String {
        let digits = String(i)
        return prefix + String(repeating: "0", count: 15 - digits.count) + digits
    }

    /// `valueVariants` values of `size` bytes; value `i` is used for key `i`.
    static func values(size: Int) -> [[UInt8]] {
        (0..<valueVariants).map { seed in
            var rng = XorShift(seed: UInt64(seed + 1))
            var bytes = [UInt8](repeating: UInt8(ascii: "v"), count: size)
            for i in 0..<(size / 2) { bytes[i] = UInt8(truncatingIfNeeded: rng.next()) }
            return bytes
        }
    }
}

/// xorshift64: fast, seeded, the same on every run.
struct XorShift: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    @inline(__always) mutating func next() -> UInt64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return state
    }
}
