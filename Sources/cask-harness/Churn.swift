import ArgumentParser
import Cask
import CaskToolSupport
import Foundation
import CaskBaselines

/// `cask-harness churn`: the steady state of a cache. Fills `--count` keys, then overwrites random
/// keys `--ops` times with every put timed, the store full, evicting and compacting; prints the
/// throughput, the tail of the put latencies and how many puts took over 1 ms and 10 ms.
/// The peer harness (`cask-versus churn`) runs the same workload against other engines; this one
/// is the quick loop for profiling the store alone (`perf record -g cask-harness churn ...`).
struct Churn: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fill, then time every put of sustained random overwrites (the store full and compacting).")

    @Option(help: "Scratch directory (a fresh folder inside it is used and removed).") var directory = NSTemporaryDirectory()
    @Option(help: "Keys filled first.") var count = 1_000_000
    @Option(help: "Random overwrites timed after the fill.") var ops = 5_000_000
    @Option(help: "Value size in bytes (half random, half repeated).") var valueSize = 100
    @Option(help: "limits.byteLimit in bytes (none by default).") var byteLimit: Int?
    @Option(help: "segmentSize in bytes (the store's default when absent).") var segmentSize: Int?
    @Option(help: "limits.liveRatio (the store's default when absent).") var liveRatio: Double?
    @Option(help: "Churn the store in this folder and keep it (for timing its open: cask-harness footprint).") var keep: String?
    @Option(help: "Give every put this time to live, in seconds (items then expire, and the compaction thread sweeps them).") var ttl: Int?
    @Flag(help: "Encryption at rest on (AES-256-GCM, a random key), to time sealing at steady state.") var encrypt = false

    func validate() throws {
        try ArgumentValues.count(count, option: "--count", minimum: 1)
        try ArgumentValues.count(ops, option: "--ops", minimum: 1)
        try ArgumentValues.count(valueSize, option: "--value-size", minimum: 1)
        if let ttl { try ArgumentValues.count(ttl, option: "--ttl", minimum: 1) }
    }

    func run() throws {
        let path = keep ?? (directory as NSString).appendingPathComponent("cask-churn-\(UUID().uuidString)")
        defer { if keep == nil { try? FileManager.default.removeItem(atPath: path) } }   // harmless: a scratch folder
        var options = StoreOptions()
        options.durability = .none
        options.limits.byteLimit = byteLimit
        if let segmentSize { options.segmentSize = segmentSize }
        if let liveRatio { options.limits.liveRatio = liveRatio }
        if encrypt { options.encryption = try withStoreErrors { try StoreEncryption(currentKey: EncryptionKey()) } }
        let keys = (0..<count).map { i in "k" + String(repeating: "0", count: 15 - String(i).count) + String(i) }
        let values = Self.values(size: valueSize)
        try withStoreErrors {
            let store = try DiskStore(directory: path, options: options)
            let timeToLive = ttl.map { Duration.seconds($0) }
            for i in 0..<count { try store.setValue(values[i & 63], forKey: keys[i], timeToLive: timeToLive) }
            var latencies = [UInt32](repeating: 0, count: ops)
            var rng = XorShift(seed: 0x9E37_79B9_7F4A_7C15)   // not the system generator: a syscall per key
            var slow: [(UInt64, UInt64)] = []   // puts over 10 ms: (start, end)
            let watch = StallWatch()
            let start = DispatchTime.now().uptimeNanoseconds
            for n in 0..<ops {
                let key = keys[Int(rng.next() % UInt64(count))]
                let t = StallWatch.now()
                try store.setValue(values[n & 63], forKey: key, timeToLive: timeToLive)
                let end = StallWatch.now()
                latencies[n] = UInt32(clamping: end - t)
                if end - t > 10_000_000 { slow.append((t, end)) }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            watch.stop()
            let stats = store.statistics
            try store.close()
            print(Self.summary(latencies, seconds: seconds, compactions: stats.compactions))
            print(Self.work(stats))
            print("machine: \(watch.count) late wake-ups of a 1 ms timer thread (>= 5 ms late); \(watch.overlapping(slow)) of the \(slow.count) puts over 10 ms overlap one")
        }
    }

    /// 64 values of `size` bytes, half random, half repeated (so LZ4 halves them), shared with
    /// `cask-harness bench`.
    static func values(size: Int) -> [Data] {
        (0..<64).map { seed in
            var x = UInt64(seed + 1) &* 0x9E37_79B9_7F4A_7C15
            var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: size)
            for i in 0..<(size / 2) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; bytes[i] = UInt8(truncatingIfNeeded: x) }
            return Data(bytes)
        }
    }

    /// What the store did meanwhile: evictions (on the write path and ahead of it), compaction
    /// traffic and disk use.
    static func work(_ s: StoreStatistics) -> String {
        let mib = { (b: Int) in String(format: "%.1f MiB", Double(b) / 1_048_576) }
        return "store: evicted \(s.evictionsBySize) (\(s.evictionsAhead) ahead)  compaction read \(mib(s.compactionBytesRead))"
            + " wrote \(mib(s.compactionBytesWritten))  written \(mib(s.bytesWritten))  disk \(mib(s.fileBytes))  live \(mib(s.liveBytes))"
            + "  items \(s.itemCount)  syncs \(s.segmentSyncs)  compactions on the write path \(s.compactionsOnTheWritePath)  delayed \(s.delayedWrites)  walks \(s.evictionWalksOnTheWritePath)"
    }

    static func summary(_ latencies: [UInt32], seconds: Double, compactions: Int) -> String {
        let sorted = latencies.sorted()
        func p(_ q: Double) -> String { String(format: "%.1f", Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]) / 1000) }
        let over1 = latencies.lazy.filter { $0 > 1_000_000 }.count
        let over10 = latencies.lazy.filter { $0 > 10_000_000 }.count
        return String(format: "churn: %.2f M puts/s", Double(latencies.count) / seconds / 1e6)
            + "  p50 \(p(0.5)) µs  p99 \(p(0.99)) µs  p99.9 \(p(0.999)) µs  p99.99 \(p(0.9999)) µs"
            + String(format: "  max %.2f ms", Double(sorted.last ?? 0) / 1e6)
            + "  >1ms \(over1)  >10ms \(over10)  compactions \(compactions)"
    }
}

/// A fast deterministic generator for the workload's keys (xorshift64).
struct XorShift: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return state
    }
}
