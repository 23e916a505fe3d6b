import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

/// `cask-harness hitratio TRACE`: replays a request trace cache-aside (get; on a miss, set)
/// against a `DiskStore` opened with only `limits.byteLimit` set (and what `--policy` changes),
/// and prints one JSON line: the hits, the live data and disk use at the end and over time, and
/// the write amplification. `Benchmarks/hitratio/peers.py` replays the same traces against an
/// exact LRU, python-diskcache and theine, counting the same way; `tools/bench-hitratio.sh` runs
/// both and tabulates them (issue 43; Benchmarks/README.md, "Hit ratio").
struct HitRatio: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hitratio",
        abstract: "Replay a key trace cache-aside against a store with a byte limit; print hits, live data and disk use as JSON.")

    @Argument(help: "Trace file: raw little-endian uint32 key ids, one per request (Benchmarks/hitratio/traces.py); id i is the key k%08d.")
    var trace: String
    @Option(help: "Scratch directory (a fresh folder inside it is used and removed).") var directory = NSTemporaryDirectory()
    @Option(help: "limits.byteLimit in bytes, the only option set.") var byteLimit = 50_000_000
    @Option(help: "Value size in bytes (random bytes: LZ4 leaves them as they are).") var valueSize = 8192
    @Option(help: "Set rate held, in MB/s (10^6 key and value bytes set a second); 0: as fast as the store takes them.")
    var rate: Double = 0
    @Option(help: "Policy passed to applyPolicy: \(hitRatioPolicies.joined(separator: ", ")); the store's default when absent.")
    var policy: String?
    @Option(help: "Fraction of the requests, from the start, not counted in hits and requests (0 ..< 1).") var warmup: Double = 0
    @Option(help: "Requests between two samples of the time series.") var sampleEvery = 10_000
    @Option(help: "The trace's name in the output (default: the file's name without .u32).") var name: String?

    func validate() throws {
        try ArgumentValues.count(byteLimit, option: "--byte-limit", minimum: 1)
        try ArgumentValues.count(valueSize, option: "--value-size", minimum: 1)
        try ArgumentValues.count(sampleEvery, option: "--sample-every", minimum: 1)
        guard rate >= 0, rate.isFinite else { throw ValidationError("--rate must be 0 or more MB/s; got \(rate)") }
        guard (0..<1) ~= warmup else { throw ValidationError("--warmup must be at least 0 and under 1; got \(warmup)") }
        if let policy {
            var scratch = StoreOptions()
            try applyPolicy(policy, to: &scratch)
        }
    }

    func run() throws {
        let ids = try HitRatioTrace.read(trace)
        let traceName = name ?? HitRatioTrace.name(of: trace)
        let path = (directory as NSString).appendingPathComponent("cask-hitratio-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: path) }   // harmless: a scratch folder
        var options = StoreOptions()
        options.limits.byteLimit = byteLimit
        if let policy { try applyPolicy(policy, to: &options) }
        let settings = HitRatioSettings(
            trace: traceName, policy: policy ?? "default", byteLimit: byteLimit, valueSize: valueSize, rate: rate,
            warmup: warmup, warmupRequests: Int(Double(ids.count) * warmup), sampleEvery: sampleEvery)
        let report = try withStoreErrors { [options] in
            let store = try DiskStore(directory: path, options: options)
            var replay = HitRatioReplay(store: store, ids: ids, settings: settings)
            try replay.run()
            return try replay.finish()
        }
        print(report.jsonLine)
    }
}

/// What one replay is asked to do, as given on the command line.
struct HitRatioSettings {
    var trace: String
    var policy: String
    var byteLimit: Int
    var valueSize: Int
    /// MB/s of key and value bytes set; 0 for no pacing.
    var rate: Double
    var warmup: Double
    /// Requests at the start that are not counted.
    var warmupRequests: Int
    var sampleEvery: Int
}

/// Reading a trace and naming its keys.
enum HitRatioTrace {
    /// The key ids of the trace file at `path`: raw little-endian uint32s, nothing else.
    /// - Throws: when the file cannot be read, is empty, or its size is not a multiple of 4.
    static func read(_ path: String) throws -> [UInt32] {
        let bytes: [UInt8]
        do {
            bytes = try InputReader.read(path: path)
        } catch {
            throw ValidationError("cannot read the trace \(path): \(String(cString: strerror(error.errno))) (errno \(error.errno))")
        }
        guard !bytes.isEmpty, bytes.count % 4 == 0 else {
            throw ValidationError("\(path): a trace is a non-empty array of 4-byte key ids; its size is \(bytes.count) bytes")
        }
        return bytes.withUnsafeBytes { raw in
            (0..<(raw.count / 4)).map { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self)) }
        }
    }

    /// A trace's name: its file's name without the extension (`zipf-0.8.u32` → `zipf-0.8`).
    static func name(of path: String) -> String {
        ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    }

    /// The key of id `id`: "k" and the id in at least 8 digits, zero-padded (Python's
    /// `"k%08d" % id`, as peers.py names it; 9 UTF-8 bytes, a small string up to id 10^8).
    static func key(_ id: UInt32) -> String {
        let digits = String(id)
        return digits.count >= 8 ? "k" + digits : "k" + String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// 64 values of `size` random bytes (xorshift64, seeded: the same every run), which LZ4
    /// cannot shrink, so that the store holds what the caller set.
    static func values(size: Int) -> [Data] {
        var rng = XorShift(seed: 0x2545_F491_4F6C_DD1D)
        return (0..<64).map { _ in
            var bytes = [UInt8](repeating: 0, count: size)
            var i = 0
            while i < size {
                var word = rng.next()
                for _ in 0..<min(8, size - i) { bytes[i] = UInt8(truncatingIfNeeded: word); word >>= 8; i += 1 }
            }
            return Data(bytes)
        }
    }
}

/// One replay of a trace against an open store: counts hits, paces the sets, samples live data
/// and disk use every `sampleEvery` requests.
struct HitRatioReplay {
    let store: DiskStore
    let ids: [UInt32]
    let settings: HitRatioSettings
    let values: [Data]
    let start = DispatchTime.now().uptimeNanoseconds
    /// Hits and requests counted (after the warm-up).
    var hits = 0, requests = 0
    /// Every hit, the warm-up's included (the store's own `hits` counter must agree).
    var allHits = 0
    /// Hits since the last sample.
    var windowHits = 0
    /// Sets made, and their key and value bytes.
    var sets = 0, userBytes = 0
    /// The most bytes of segment and hint files seen: after every set and at every sample.
    var maxDiskBytes = 0
    var series: [HitRatioSample] = []

    init(store: DiskStore, ids: [UInt32], settings: HitRatioSettings) {
        (self.store, self.ids, self.settings) = (store, ids, settings)
        values = HitRatioTrace.values(size: settings.valueSize)
    }

    var seconds: Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

    /// Every request in order: a get; on a miss, a set. Counted unless in the warm-up.
    mutating func run() throws {
        for (n, id) in ids.enumerated() {
            let key = HitRatioTrace.key(id)
            let hit = try store.withValue(forKey: key) { $0.count } != nil
            if n >= settings.warmupRequests {
                requests += 1
                if hit { hits += 1 }
            }
            if hit {
                allHits += 1
                windowHits += 1
            } else {
                try store.setValue(values[sets & 63], forKey: key)
                sets += 1
                userBytes += key.utf8.count + settings.valueSize
                maxDiskBytes = max(maxDiskBytes, store.fileBytes)
                pace()
            }
            if (n + 1) % settings.sampleEvery == 0 || n + 1 == ids.count { try sample(n + 1) }
        }
    }

    /// Sleeps while the sets so far are more than 1 ms ahead of `rate` (none without a rate).
    func pace() {
        guard settings.rate > 0 else { return }
        let due = start + UInt64(Double(userBytes) / (settings.rate * 1e6) * 1e9)
        let now = DispatchTime.now().uptimeNanoseconds
        if due > now + 1_000_000 { Thread.sleep(forTimeInterval: Double(due - now) / 1e9) }
    }

    /// Appends a sample after `done` requests and reports progress on stderr every tenth of
    /// the trace.
    mutating func sample(_ done: Int) throws {
        let stats = store.statistics
        let live = try HitRatioLiveData.listed(store)
        maxDiskBytes = max(maxDiskBytes, stats.fileBytes)
        let window = done - (series.last?.requests ?? 0)
        series.append(HitRatioSample(
            requests: done, seconds: seconds, liveBytes: live.bytes, liveItems: live.items, storeLiveBytes: stats.liveBytes,
            liveByteTarget: stats.liveByteTarget, diskBytes: stats.fileBytes,
            windowHitRatio: Double(windowHits) / Double(max(1, window))))
        windowHits = 0
        let tenth = max(1, ids.count / 10)
        if done / tenth != (done - window) / tenth || done == ids.count {
            printError(String(format: "  cask %@%@: %3d%% of %d requests, hit ratio %.3f, live %.1f MB, disk %.1f MB, %.0f s",
                              settings.trace, settings.rate > 0 ? " at \(settings.rate) MB/s" : "", done * 100 / ids.count, ids.count,
                              Double(hits) / Double(max(1, requests)), Double(live.bytes) / 1e6, Double(stats.fileBytes) / 1e6, seconds))
        }
    }

    /// The report, after counting the live data by reading every item back; closes the store.
    mutating func finish() throws -> HitRatioReport {
        let elapsed = seconds
        let readable = try HitRatioLiveData.readable(store)
        let stats = store.statistics
        let directoryBytes = HitRatioLiveData.directoryBytes(store.directory)
        try store.close()
        // The compaction thread may still evict toward the live target meanwhile: a warning, not a failure.
        if readable.items != stats.itemCount || stats.hits != allHits + readable.items {
            printError("  warning: \(readable.items) items read back, the store counts \(stats.itemCount) after; \(allHits) hits and \(readable.items) reads back, the store counts \(stats.hits) hits")
        }
        return HitRatioReport(settings: settings, replay: self, stats: stats, readable: readable,
                              directoryBytes: directoryBytes, seconds: elapsed)
    }
}
