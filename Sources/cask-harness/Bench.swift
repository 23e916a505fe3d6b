import ArgumentParser
import Cask
import CaskBaselines
import CaskToolSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
import CaskFormat
#endif

/// The key `bench --encrypt` seals with: random, one per process, so that a reopen has it.
private let benchKey = EncryptionKey()

/// `cask-harness bench`: single-operation throughput and latency of the disk store, medians of several runs.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure put, get, sync and open speed on a scratch store (medians of --runs runs).")

    enum Workload: String, ExpressibleByArgument, CaseIterable {
        case put, putSync = "put-sync", get, getMissing = "get-missing", open
        /// Gets from a read-only open of the same store, which reads its newest segment with
        /// pread instead of a mapping (format-spec.md, "Readers"): with everything in one
        /// segment, beside `get`, what that costs.
        case getReadOnly = "get-read-only"
        /// The physical-limit peer: the same record bytes appended with a 1 MiB buffer and
        /// write(2), a Swift Dictionary as index; gets are one pread each.
        case baseline
        /// Random overwrites at a fixed byte limit (the same as `cask-harness bench-compaction`).
        case compaction
        case all
    }

    @Argument(help: "What to measure: \(Workload.allCases.map(\.rawValue).joined(separator: ", ")).")
    var workload: Workload = .all
    @Option(help: "Scratch directory (a fresh folder inside it is used and removed).") var directory = NSTemporaryDirectory()
    @Option(help: "Operations per run.") var count = 1_000_000
    @Option(help: "Value size in bytes (half random, half repeated).") var valueSize = 100
    @Option(help: "Runs; the median is reported.") var runs = 3

    func validate() throws {
        try ArgumentValues.count(count, option: "--count", minimum: 1)
        try ArgumentValues.count(valueSize, option: "--value-size", minimum: 1)
        try ArgumentValues.count(runs, option: "--runs", minimum: 1)
    }
    @Flag(help: "Disable LZ4.") var noCompression = false
    @Flag(help: "Encryption at rest on (AES-256-GCM, a random key per run), to measure what sealing costs.") var encrypt = false
    @Flag(help: "Register a timing observer (as CaskMetrics does) to measure what timing costs when on.") var observeTimings = false

    /// The observer `--observe-timings` registers: it counts what it is given.
    func observe(_ store: DiskStore) -> TimingObservation? {
        guard observeTimings else { return nil }
        final class Seen: Sendable { let count = Atomic<Int>(0) }
        let seen = Seen()
        return store.observeTimings { _ in seen.count.add(1, ordering: .relaxed) }
    }

    func key(_ i: Int) -> String {
        let digits = String(i)
        return "k" + String(repeating: "0", count: 15 - digits.count) + digits
    }

    func values() -> [Data] { Churn.values(size: valueSize) }

    func scratch() -> String { (directory as NSString).appendingPathComponent("cask-bench-\(UUID().uuidString)") }

    func makeOptions(_ durability: Durability = .none) throws -> StoreOptions {
        var o = StoreOptions()
        o.durability = durability
        if noCompression { o.compression = .never }
        o.logger.logLevel = .warning
        if encrypt { o.encryption = try StoreEncryption(currentKey: benchKey) }
        return o
    }

    func run() throws {
        let all: [Workload] = workload == .all ? [.baseline, .put, .get, .getMissing, .putSync, .open] : [workload]
        print("cask-harness bench: \(count) ops per run, \(valueSize)-byte values, 16-byte keys, median of \(runs) runs\(encrypt ? ", encrypted (AES-256-GCM)" : "")")
        if workload == .compaction {
            let bench = try CompactionBench.parse(["--directory", directory])
            try bench.run()
            return
        }
        for w in all { try withStoreErrors { try measure(w) } }
    }

    /// One run's figures: throughput (for `open`: seconds from the index snapshot), an optional
    /// second figure (`baseline`: pread gets per second; `open`: seconds by scanning), latency
    /// samples, and for `open` more named figures (seconds, or bytes per key).
    struct RunResult {
        var rate: Double
        var second: Double?
        var samples: LatencySamples
        var note = ""
        var figures: [String: Double] = [:]
    }

    /// A result that would make the figures meaningless (the store read back wrong values).
    struct BenchFailure: Error, CustomStringConvertible {
        var description: String
    }

    func measure(_ w: Workload) throws {
        let vals = values()
        let keys = (0..<count).map(key)
        var results: [RunResult] = []
        for _ in 0..<runs {
            let path = scratch()
            defer { try? FileManager.default.removeItem(atPath: path) }
            switch w {
            case .put, .putSync: results.append(try runPuts(sync: w == .putSync, at: path, keys: keys, values: vals))
            case .get, .getMissing, .getReadOnly:
                results.append(try runGets(missing: w == .getMissing, readOnly: w == .getReadOnly, at: path, keys: keys, values: vals))
            case .open: results.append(try runOpen(at: path, keys: keys, values: vals))
            case .baseline: results.append(try runBaseline(at: path, keys: keys, values: vals))
            case .compaction, .all: break
            }
        }
        report(w, results)
    }

    private func runPuts(sync: Bool, at path: String, keys: [String], values vals: [Data]) throws -> RunResult {
        let n = sync ? min(count, 5000) : count
        var samples = LatencySamples(capacity: min(n, 200_000))
        let store = try DiskStore(directory: path, options: try makeOptions(sync ? .everyWrite : .none))
        let observation = observe(store)
        defer { withExtendedLifetime(observation) {} }
        let start = DispatchTime.now().uptimeNanoseconds
        for i in 0..<n {
            let t = samples.shouldSample(i) ? DispatchTime.now().uptimeNanoseconds : 0
            try store.setValue(vals[i & 63], forKey: keys[i])
            if t != 0 { samples.add(DispatchTime.now().uptimeNanoseconds - t) }
        }
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        try store.close()
        return RunResult(rate: Double(n) / (Double(elapsed) / 1e9), samples: samples)
    }

    private func runGets(missing: Bool, readOnly: Bool = false, at path: String, keys: [String], values vals: [Data]) throws -> RunResult {
        var samples = LatencySamples(capacity: min(count, 200_000))
        var store = try DiskStore(directory: path, options: try makeOptions())
        for i in 0..<count { try store.setValue(vals[i & 63], forKey: keys[i]) }
        try store.sync()
        if readOnly {
            try store.close()
            var o = try makeOptions()
            o.isReadOnly = true
            store = try DiskStore(directory: path, options: o)
        }
        let observation = observe(store)
        defer { withExtendedLifetime(observation) {} }
        let probe = missing ? keys.map { "m" + $0.dropFirst() } : keys
        var x = 12345
        var found = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for i in 0..<count {
            x = (x &* 1_103_515_245 &+ 12345) & 0x7fff_ffff
            let t = samples.shouldSample(i) ? DispatchTime.now().uptimeNanoseconds : 0
            if try store.value(forKey: probe[x % count]) != nil { found += 1 }
            if t != 0 { samples.add(DispatchTime.now().uptimeNanoseconds - t) }
        }
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        try store.close()
        guard found == (missing ? 0 : count) else { throw BenchFailure(description: "bench read \(found) values, expected \(missing ? 0 : count)") }
        return RunResult(rate: Double(count) / (Double(elapsed) / 1e9), samples: samples)
    }

    private func runOpen(at path: String, keys: [String], values vals: [Data]) throws -> RunResult {
        var figures: [String: Double] = [:]
        do {
            // The store of issue 15: every key put, half of them overwritten; then every key read
            // once in random order (access times change everywhere), and a close after each.
            let store = try DiskStore(directory: path, options: try makeOptions())
            for i in 0..<count { try store.setValue(vals[i & 63], forKey: keys[i]) }
            for i in stride(from: 0, to: count, by: 2) { try store.setValue(vals[(i + 1) & 63], forKey: keys[i]) }
            figures["closeAfterPuts"] = try Self.seconds { try store.close() }
            let reopened = try DiskStore(directory: path, options: try makeOptions())
            var x = 12345
            for _ in 0..<count {
                x = (x &* 1_103_515_245 &+ 12345) & 0x7fff_ffff
                _ = try reopened.withValue(forKey: keys[x % count]) { $0.count }
            }
            figures["closeAfterReads"] = try Self.seconds { try reopened.close() }
        }
        let (snapshot, memory) = try timedOpen(path, expectSnapshot: true)
        figures["indexBytesPerKey"] = memory
        if Self.dropPageCache() {
            // Cold: the page cache dropped first (needs root; skipped otherwise).
            figures["coldSnapshot"] = try timedOpen(path, expectSnapshot: true).seconds
        }
        figures["anonymousBytesPerKey"] = try footprint(of: path)
        try removeFiles(in: path) { $0 == "INDEX" }
        figures["hints"] = try timedOpen(path, expectSnapshot: false).seconds
        try removeFiles(in: path) { $0 == "INDEX" || $0.hasSuffix(".hint") }
        let scan = try timedOpen(path, expectSnapshot: false).seconds
        return RunResult(rate: snapshot, second: scan, samples: LatencySamples(capacity: 0), figures: figures)
    }

    /// Opens the store at `path`, checks it, closes it; returns the open's seconds and the index
    /// memory per key (the store's own count of its tables).
    private func timedOpen(_ path: String, expectSnapshot: Bool) throws -> (seconds: Double, bytesPerKey: Double) {
        let start = DispatchTime.now().uptimeNanoseconds
        let store = try DiskStore(directory: path, options: try makeOptions())
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let stats = store.statistics
        guard store.count == count, stats.indexLoadedFromSnapshot == expectSnapshot else {
            throw BenchFailure(description: "reopened \(store.count) keys (expected \(count)), from the snapshot: \(stats.indexLoadedFromSnapshot)")
        }
        try store.close()
        return (seconds, Double(stats.indexMemoryBytes) / Double(count))
    }

    /// Anonymous memory per key of the store at `path` opened in a fresh process
    /// (`cask-harness footprint`), so that no allocation of this one is reused.
    func footprint(of path: String) throws -> Double {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        child.arguments = ["footprint", path]
        if encrypt {
            // The child opens the store with the run's key, from a file only this user can read.
            let keyFile = path + ".key"
            guard FileManager.default.createFile(atPath: keyFile, contents: benchKey.withUnsafeBytes { Data($0) }, attributes: [.posixPermissions: 0o600]) else {
                throw BenchFailure(description: "could not write \(keyFile)")
            }
            var environment = ProcessInfo.processInfo.environment
            environment["CASK_KEY_FILE"] = keyFile
            child.environment = environment
        }
        defer { try? FileManager.default.removeItem(atPath: path + ".key") }
        let pipe = Pipe()
        child.standardOutput = pipe
        try child.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        guard child.terminationStatus == 0, let figure = output.split(separator: " ").dropFirst(3).first.flatMap({ Double($0) }) else {
            throw BenchFailure(description: "cask-harness footprint failed: \(output)")
        }
        return figure
    }

    /// Writes back and drops the page cache (`/proc/sys/vm/drop_caches`); false when this
    /// process may not.
    static func dropPageCache() -> Bool {
        sync()
        guard let f = fopen("/proc/sys/vm/drop_caches", "w") else { return false }
        defer { fclose(f) }
        return fputs("3\n", f) >= 0 && fflush(f) == 0
    }

    private func removeFiles(in path: String, where matches: (String) -> Bool) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: path) where matches(name) {
            try FileManager.default.removeItem(atPath: (path as NSString).appendingPathComponent(name))
        }
    }

    /// Seconds `body` takes.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// The fastest simple store doing the same work (``AppendLog``): the same record bytes
    /// appended through a 1 MiB buffer with `write(2)`, a `Dictionary` keyed by a 16-byte inline
    /// key, `pread` gets.
    private func runBaseline(at path: String, keys: [String], values vals: [Data]) throws -> RunResult {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let log = try AppendLog(path: path + "/log")
        let start = DispatchTime.now().uptimeNanoseconds
        for i in 0..<count {
            try vals[i & 63].withUnsafeBytes { v in try log.put(keys[i], v) }
        }
        try log.drain()
        let rate = Double(count) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        var x = 12345
        var scratch: [UInt8] = []
        let readStart = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<count {
            x = (x &* 1_103_515_245 &+ 12345) & 0x7fff_ffff
            _ = try log.get(keys[x % count], into: &scratch)
        }
        let gets = Double(count) / (Double(DispatchTime.now().uptimeNanoseconds - readStart) / 1e9)
        return RunResult(rate: rate, second: gets, samples: LatencySamples(capacity: 0))
    }

    /// Prints the medians of the runs.
    private func report(_ w: Workload, _ results: [RunResult]) {
        func median(_ a: [Double]) -> Double { a.isEmpty ? 0 : a.sorted()[a.count / 2] }
        let rate = median(results.map(\.rate))
        let second = median(results.compactMap(\.second))
        switch w {
        case .baseline:
            print("  baseline     append \(Formatting.rate(rate, per: 1)), pread get \(Formatting.rate(second, per: 1))  (AppendLog: write(2) through a 1 MiB buffer, Dictionary keyed by a 16-byte inline key)")
        case .open:
            func figure(_ name: String) -> Double { median(results.compactMap { $0.figures[name] }) }
            let cold = results.contains { $0.figures["coldSnapshot"] != nil }
                ? String(format: " (%.3f s with the page cache dropped)", figure("coldSnapshot")) : ""
            print(String(format: "  open %d keys: %.3f s from the index snapshot", count, rate) + cold
                  + String(format: ", %.3f s from hint files, %.3f s by scanning; index memory %.1f bytes per key (%.1f of anonymous memory); "
                           + "close %.3f s after the puts, %.3f s after reading every key",
                           figure("hints"), second, figure("indexBytesPerKey"), figure("anonymousBytesPerKey"), figure("closeAfterPuts"), figure("closeAfterReads")))
        default:
            let sampled = results.filter { !$0.samples.values.isEmpty }
            let latency = sampled.isEmpty ? "" : String(format: "  p50 %.2f µs  p99 %.2f µs",
                median(sampled.map { $0.samples.percentile(0.5) }) / 1000, median(sampled.map { $0.samples.percentile(0.99) }) / 1000)
            print("  \(w.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)) \(Formatting.rate(rate, per: 1).padding(toLength: 10, withPad: " ", startingAt: 0))\(latency)")
        }
    }
}

/// Every k-th latency, so that timing costs little.
struct LatencySamples {
    var values: [UInt64] = []
    let stride: Int
    init(capacity: Int) { stride = 8; values.reserveCapacity(capacity / 8 + 1) }
    func shouldSample(_ i: Int) -> Bool { i % stride == 0 }
    mutating func add(_ v: UInt64) { values.append(v) }
    func percentile(_ p: Double) -> Double {
        let s = values.sorted()
        return Double(s[min(s.count - 1, Int(Double(s.count) * p))])
    }
}
