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

    func run() throws {
        let path = (directory as NSString).appendingPathComponent("cask-bench-compaction-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let limit = Int64(limitMiB) << 20
        let compactionSeconds = Mutex<Double>(0)
        var options = StoreOptions()
        options.durability = .none
        options.segmentSize = segmentMiB << 20
        options.limits.byteLimit = Int(limit)
        options.logger.logLevel = .warning
        if !compress { options.compression = .never }
        options.eventHandler = { event in
            if case .compacted(let r) = event { compactionSeconds.withLock { $0 += r.seconds } }
        }
        let store = try withStoreErrors { try DiskStore(directory: path, options: options) }
        // Enough keys that the live set is about the byte limit's live share.
        let record = valueSize + 16 + 40
        let keys = keyCount ?? Int(Double(limit) * keySpace) / record
        var x: UInt64 = 88172645463325252
        func next() -> UInt64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
        let values = (0..<64).map { Self.value(seed: $0, size: valueSize) }
        let total = puts.map { Int64($0) * Int64(valueSize) } ?? Int64(volume) * limit
        let storageWrites0 = Self.storageWriteBytes()
        var written: Int64 = 0
        var putIdle: [UInt64] = [], putBusy: [UInt64] = [], getIdle: [UInt64] = [], getBusy: [UInt64] = []
        var samples: [(Int64, Int64, Int64)] = []
        var maxDisk: Int64 = 0
        var spaceAmps: [Double] = []
        let start = DispatchTime.now().uptimeNanoseconds
        var i = 0
        let progress = Progress("bench-compaction")
        try withStoreErrors {
            while written < total {
                let key = Self.key(next() % UInt64(keys))
                let busy = store.isCompacting
                let t0 = DispatchTime.now().uptimeNanoseconds
                try store.setValue(values[i & 63], forKey: key)
                let t1 = DispatchTime.now().uptimeNanoseconds
                if gets { _ = try store.value(forKey: Self.key(next() % UInt64(keys))) }
                let t2 = DispatchTime.now().uptimeNanoseconds
                if busy { putBusy.append(t1 - t0); getBusy.append(t2 - t1) } else { putIdle.append(t1 - t0); getIdle.append(t2 - t1) }
                written += Int64(valueSize)
                i += 1
                if i % 2000 == 0 {
                    let s = store.statistics
                    maxDisk = max(maxDisk, Int64(s.fileBytes))
                    if s.liveBytes > 0 { spaceAmps.append(Double(s.fileBytes) / Double(s.liveBytes)) }
                    samples.append((written, Int64(s.fileBytes), Int64(s.liveBytes)))
                    progress.update(written, of: total)
                }
            }
        }
        progress.finish()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let stats = store.statistics
        try withStoreErrors { try store.close() }
        func pct(_ a: [UInt64], _ p: Double) -> String {
            guard !a.isEmpty else { return "-" }
            let s = a.sorted()
            return String(format: "%.1f", Double(s[min(s.count - 1, Int(Double(s.count) * p))]) / 1000)
        }
        let compactSecs = compactionSeconds.withLock { $0 }
        print("cask-harness bench-compaction: byte limit \(limitMiB) MiB, segments \(segmentMiB) MiB, \(valueSize)-byte values over \(keys) keys, \(Formatting.bytes(total)) written in \(String(format: "%.1f", seconds)) s (\(Formatting.rate(Double(i), per: seconds)) puts + as many gets)")
        print(String(format: "  compaction: %d passes, %.1f MB/s rewritten (%@ written in %.2f s of compaction)",
                     Int(stats.compactions), Double(stats.compactionBytesWritten) / 1e6 / max(compactSecs, 1e-9), Formatting.bytes(stats.compactionBytesWritten) as NSString, compactSecs))
        printWriteAmplification(stats, valueBytes: written, puts: i, storageWrites: Self.storageWriteBytes() - storageWrites0)
        let sortedAmps = spaceAmps.sorted()
        print(String(format: "  space amplification (file / live): median %.2f, max %.2f; max disk use %@ (limit %@)",
                     sortedAmps.isEmpty ? 0 : sortedAmps[sortedAmps.count / 2], sortedAmps.last ?? 0, Formatting.bytes(maxDisk) as NSString, Formatting.bytes(limit) as NSString))
        print("  put µs  idle p50 \(pct(putIdle, 0.5)) p99 \(pct(putIdle, 0.99)) p999 \(pct(putIdle, 0.999))  | during compaction p50 \(pct(putBusy, 0.5)) p99 \(pct(putBusy, 0.99)) p999 \(pct(putBusy, 0.999))  (\(putBusy.count) samples)")
        print("  get µs  idle p50 \(pct(getIdle, 0.5)) p99 \(pct(getIdle, 0.99)) p999 \(pct(getIdle, 0.999))  | during compaction p50 \(pct(getBusy, 0.5)) p99 \(pct(getBusy, 0.99)) p999 \(pct(getBusy, 0.999))")
        if let csv {
            let text = "bytes_put,file_bytes,live_bytes\n" + samples.map { "\($0.0),\($0.1),\($0.2)" }.joined(separator: "\n") + "\n"
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
