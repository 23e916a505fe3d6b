/// How often keys were asked for lately: a count-min sketch of 4-bit counters, the popularity
/// estimate of TinyLFU (Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient Cache
/// Admission Policy", 2017).
///
/// Each key hash picks one counter in each of four rows; its estimate is the smallest of the
/// four (an overestimate only when every one of them is shared with more popular keys). Counters
/// stop at 15. After `10 × capacity` increments every counter is halved, so that the sketch
/// forgets: an estimate weighs recent requests most ("aging" in the paper). Memory: half a byte
/// per counter, `4 × capacity` counters a row rounded up to a power of two, 64 at least: 8 bytes
/// a key.
///
/// Not thread-safe: the owner serializes access (the store's lock, a memory shard's lock).
package struct FrequencySketch: Sendable {
    /// The counters, 16 to a word; row `r` of a key is word `index(hash, r)`, nibble `nibble(hash, r)`.
    private var words: [UInt64]
    /// Words a row holds, minus one (a power of two minus one).
    private var rowMask: Int
    /// Increments since the last halving.
    package private(set) var additions = 0
    /// Increments after which every counter is halved.
    package private(set) var sampleSize: Int

    /// A sketch for about `capacity` distinct popular keys (at least 64).
    package init(capacity: Int) {
        let rowWords = Self.rowWords(capacity)
        words = Array(repeating: 0, count: rowWords * 4)
        rowMask = rowWords - 1
        sampleSize = 10 * max(64, capacity)
    }

    /// Words a row needs for `4 × capacity` counters (few keys share a counter): a power of
    /// two, at least 4 (64 counters).
    private static func rowWords(_ capacity: Int) -> Int {
        var n = 4
        while n * 16 < 4 * capacity && n < 1 << 26 { n <<= 1 }
        return n
    }

    /// Sizes the sketch for `capacity` keys: rebuilt (its counts lost, as after an aging step)
    /// when its rows hold under half that many counters; otherwise only the aging period grows
    /// to `10 × capacity`. O(capacity) when rebuilt, else O(1).
    package mutating func ensureCapacity(_ capacity: Int) {
        if Self.rowWords(capacity) > 2 * (rowMask + 1) {
            self = FrequencySketch(capacity: capacity)
        } else if 10 * capacity > sampleSize {
            sampleSize = 10 * capacity
        }
    }

    /// The word and nibble of `hash` in row `row`: a different mix of the hash per row.
    @inline(__always)
    private func slot(_ hash: UInt64, row: Int) -> (word: Int, shift: UInt64) {
        var x = hash &+ 0x9E37_79B9_7F4A_7C15 &* UInt64(row + 1)
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        x ^= x >> 31
        return (row * (rowMask + 1) + Int(truncatingIfNeeded: x) & rowMask, (x >> 60) * 4)
    }

    /// The estimated count of `hash` since it was last aged (0 ... 15).
    package func frequency(_ hash: UInt64) -> Int {
        var least = 15
        for row in 0..<4 {
            let (w, shift) = slot(hash, row: row)
            least = min(least, Int((words[w] >> shift) & 15))
        }
        return least
    }

    /// Counts one request for `hash`; halves every counter once `sampleSize` were counted.
    package mutating func increment(_ hash: UInt64) {
        var added = false
        for row in 0..<4 {
            let (w, shift) = slot(hash, row: row)
            if (words[w] >> shift) & 15 < 15 {
                words[w] &+= 1 << shift
                added = true
            }
        }
        guard added else { return }
        additions += 1
        if additions >= sampleSize { age() }
    }

    /// Halves every counter (and the count of additions).
    private mutating func age() {
        for i in words.indices { words[i] = (words[i] >> 1) & 0x7777_7777_7777_7777 }
        additions /= 2
    }
}
