import ArgumentParser
import Cask
import CaskToolSupport
import Foundation
import Synchronization

/// `cask-harness bench-compaction`: a steady random-overwrite workload at a fixed byte limit.
struct CompactionBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-compaction",
        abstract: "Random overwrites at a fixed byte limit: compaction speed, write and space amplification, latency during compaction vs idle.")

    @Option(help: "Scratch directory.") var directory = NSTemporaryDirectory()
    @Option(help: "Byte limit in MiB.") var limitMiB = 256
    @Option(help: "Segment size in MiB.") var segmentMiB = 8
    @Option(help: "Bytes to write, as a multiple of the byte limit.") var volume = 10
    @Option(help: "Value size in bytes (half random, half repeated).") var valueSize = 1024
    @Option(help: "Write disk use over time to this CSV file.") var csv: String?

    func validate() throws {
        try ArgumentValues.count(limitMiB, option: "--limit-mi-b", minimum: 1)
        try ArgumentValues.count(segmentMiB, option: "--segment-mi-b", minimum: 1)
        try ArgumentValues.count(volume, option: "--volume", minimum: 1)
        try ArgumentValues.count(valueSize, option: "--value-size", minimum: 1)
        if let keyCount { try ArgumentValues.count(keyCount, option: "--key-count", minimum: 1) }
        if let puts { try ArgumentValues.count(puts, option: "--puts", minimum: 1) }
    }
    @Option(help: "Key space as a multiple of what fits in the byte limit (above 0.75 forces LRU eviction).") var keySpace = 1.2
    @Flag(help: "Compress values with LZ4 (off by default, so that amplification counts raw bytes).") var compress = false
    @Option(help: "Number of distinct 16-byte keys (overrides --key-space).") var keyCount: Int?
    @Option(help: "Number of puts (overrides --volume).") var puts: Int?
    @Flag(inversion: .prefixedNo, help: "Read a random key after each put (--no-gets: puts only, so LRU order is write order).") var gets = true

    /// What one run measured: put and get latencies split by whether a compaction pass ran,
    /// disk use over time, and space amplification samples.
    struct Samples {
        var putIdle: [UInt64] = [], putBusy: [UInt64] = [], getIdle: [UInt64] = [], getBusy: [UInt64] = []
        var disk: [(written: Int64, fileBytes: Int64, liveBytes: Int64)] = []
        var maxDisk: Int64 = 0
        var spaceAmps: [Double] = []
        var puts = 0
        var written: Int64 = 0
    }

    /// Seconds of compaction passes, summed from the store's events (any thread).
    final class CompactionSeconds: Sendable {
        let total = Mutex<Double>(0)
    }

    /// Opens the store with the bench's options, summing compaction seconds into `compactionSeconds`.
    func openStore(_ path: String, compactionSeconds: CompactionSeconds) throws -> DiskStore {
        var options = StoreOptions()
        options.durability = .none
        options.segmentSize = segmentMiB << 20
        options.limits.byteLimit = limitMiB << 20
        options.logger.logLevel = .warning
        if !compress { options.compression = .never }
        options.eventHandler = { event in
            if case .compacted(let r) = event { compactionSeconds.total.withLock { $0 += r.seconds } }
        }
        return try withStoreErrors { try DiskStore(directory: path, options: options) }
    }

    func run() throws {
        let path = (directory as NSString).appendingPathComponent("cask-bench-compaction-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let limit = Int64(limitMiB) << 20
        let compactionSeconds = CompactionSeconds()
        let store = try openStore(path, compactionSeconds: compactionSeconds)
        // Enough keys that the live set is about the byte limit's live share.
        let keys = keyCount ?? Int(Double(limit) * keySpace) / (valueSize + 16 + 40)
        let total = puts.map { Int64($0) * Int64(valueSize) } ?? Int64(volume) * limit
        let storageWrites0 = Self.storageWriteBytes()
        let start = DispatchTime.now().uptimeNanoseconds
        let samples = try overwrite(store, keys: keys, total: total)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let stats = store.statistics
        try withStoreErrors { try store.close() }
        print("cask-harness bench-compaction: byte limit \(limitMiB) MiB, segments \(segmentMiB) MiB, \(valueSize)-byte values over \(keys) keys, \(Formatting.bytes(total)) written in \(String(format: "%.1f", seconds)) s (\(Formatting.rate(Double(samples.puts), per: seconds)) puts + as many gets)")
        let compactSecs = compactionSeconds.total.withLock { $0 }
        print(String(format: "  compaction: %d passes, %.1f MB/s rewritten (%@ written in %.2f s of compaction)",
                     Int(stats.compactions), Double(stats.compactionBytesWritten) / 1e6 / max(compactSecs, 1e-9), Formatting.bytes(stats.compactionBytesWritten) as NSString, compactSecs))
        printWriteAmplification(stats, valueBytes: samples.written, puts: samples.puts, storageWrites: Self.storageWriteBytes() - storageWrites0)
        try report(samples, limit: limit)
    }

    /// Random overwrites of `keys` keys (each followed by a random read unless `--no-gets`)
    /// until `total` value bytes are written, every operation timed.
    func overwrite(_ store: DiskStore, keys: Int, total: Int64) throws -> Samples {
        var x: UInt64 = 88172645463325252
        func next() -> UInt64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
        let values = (0..<64).map { Self.value(seed: $0, size: valueSize) }
        var m = Samples()
        let progress = Progress("bench-compaction")
        try withStoreErrors {
            while m.written < total {
                let key = Self.key(next() % UInt64(keys))
                let busy = store.isCompacting
                let t0 = DispatchTime.now().uptimeNanoseconds
                try store.setValue(values[m.puts & 63], forKey: key)
                let t1 = DispatchTime.now().uptimeNanoseconds
                if gets { _ = try store.value(forKey: Self.key(next() % UInt64(keys))) }
                let t2 = DispatchTime.now().uptimeNanoseconds
                if busy { m.putBusy.append(t1 - t0); m.getBusy.append(t2 - t1) } else { m.putIdle.append(t1 - t0); m.getIdle.append(t2 - t1) }
                m.written += Int64(valueSize)
                m.puts += 1
                if m.puts % 2000 == 0 {
                    let s = store.statistics
                    m.maxDisk = max(m.maxDisk, Int64(s.fileBytes))
                    if s.liveBytes > 0 { m.spaceAmps.append(Double(s.fileBytes) / Double(s.liveBytes)) }
                    m.disk.append((m.written, Int64(s.fileBytes), Int64(s.liveBytes)))
                    progress.update(m.written, of: total)
                }
            }
        }
        progress.finish()
        return m
    }

    /// Prints space amplification and the latency percentiles, and writes the CSV when asked.
    func report(_ m: Samples, limit: Int64) throws {
        func pct(_ a: [UInt64], _ p: Double) -> String {
            guard !a.isEmpty else { return "-" }
            let s = a.sorted()
            return String(format: "%.1f", Double(s[min(s.count - 1, Int(Double(s.count) * p))]) / 1000)
        }
        let sortedAmps = m.spaceAmps.sorted()
        print(String(format: "  space amplification (file / live): median %.2f, max %.2f; max disk use %@ (limit %@)",
                     sortedAmps.isEmpty ? 0 : sortedAmps[sortedAmps.count / 2], sortedAmps.last ?? 0, Formatting.bytes(m.maxDisk) as NSString, Formatting.bytes(limit) as NSString))
        print("  put µs  idle p50 \(pct(m.putIdle, 0.5)) p99 \(pct(m.putIdle, 0.99)) p999 \(pct(m.putIdle, 0.999))  | during compaction p50 \(pct(m.putBusy, 0.5)) p99 \(pct(m.putBusy, 0.99)) p999 \(pct(m.putBusy, 0.999))  (\(m.putBusy.count) samples)")
        print("  get µs  idle p50 \(pct(m.getIdle, 0.5)) p99 \(pct(m.getIdle, 0.99)) p999 \(pct(m.getIdle, 0.999))  | during compaction p50 \(pct(m.getBusy, 0.5)) p99 \(pct(m.getBusy, 0.99)) p999 \(pct(m.getBusy, 0.999))")
        if let csv {
            let text = "bytes_put,file_bytes,live_bytes\n" + m.disk.map { "\($0.written),\($0.fileBytes),\($0.liveBytes)" }.joined(separator: "\n") + "\n"
            try text.write(toFile: csv, atomically: false, encoding: .utf8)
        }
    }

    /// Write amplification from the store's counters, and (on Linux) from what the process sent
    /// to storage, over key + value bytes, as the peers' comparison counts it.
    func printWriteAmplification(_ stats: StoreStatistics, valueBytes: Int64, puts: Int, storageWrites: Int64) {
        print(String(format: "  write amplification: %.2f  (bytes to disk / bytes put)", Double(stats.bytesWritten + stats.compactionBytesWritten) / Double(valueBytes)))
        guard storageWrites > 0 else { return }
        print(String(format: "  write amplification over key + value bytes, from /proc/self/io write_bytes: %.2f (%d evictions, %d of them without a tombstone)",
                     Double(storageWrites) / Double(Int64(puts) * Int64(valueSize + 16)), Int(stats.evictionsBySize + stats.evictionsByCount),
                     Int(stats.evictionsWithoutTombstone)))
    }

    /// A value of `size` bytes: the first half random, the rest repeated.
    static func value(seed: Int, size: Int) -> Data {
        var bytes = [UInt8](repeating: UInt8(ascii: "v"), count: size)
        var y = UInt64(seed + 1) &* 0x9E37_79B9_7F4A_7C15
        for i in 0..<(size / 2) { y ^= y << 13; y ^= y >> 7; y ^= y << 17; bytes[i] = UInt8(truncatingIfNeeded: y) }
        return Data(bytes)
    }

    /// A 16-byte key for key number `n`.
    static func key(_ n: UInt64) -> String {
        let digits = String(n)
        return "k" + String(repeating: "0", count: max(0, 15 - digits.count)) + digits
    }

    /// `write_bytes` of /proc/self/io (bytes this process sent to storage); 0 where unavailable.
    static func storageWriteBytes() -> Int64 {
        guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("write_bytes:") {
            return Int64(line.split(separator: " ").last ?? "0") ?? 0
        }
        return 0
    }
}
