import Foundation
import Histogram
import PeerEngines

/// Runs every phase of the workload against one engine, in one process, and collects the
/// figures. Each phase's correctness is checked (every read value compared with what was
/// written; missing keys must be missing; deleted keys must be gone) outside the timed loop
/// where it costs, inside it where it is one comparison.
final class Runner {
    let engine: any Engine.Type
    let scratch: String
    let count: Int
    let data: WorkloadData
    let small = WorkloadData.values(size: 100)
    let large = WorkloadData.values(size: 4096)
    var results: [PhaseResult] = []
    var samples: [DiskSample] = []
    let harnessResidentBytes: Int64

    init(engine: any Engine.Type, scratch: String, count: Int) {
        self.engine = engine
        self.scratch = scratch
        self.count = count
        data = WorkloadData(count: count)
        harnessResidentBytes = ProcessProbe.peakResidentBytes()
    }

    var supportsThreads: Bool { engine != AppendLogEngine.self }

    func directory(_ name: String) -> String { scratch + "/" + name }

    func open(_ dir: String, _ configuration: EngineConfiguration = EngineConfiguration()) throws -> any Engine {
        try engine.init(directory: dir, configuration: configuration)
    }

    // MARK: Timing

    struct Timing {
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        var seconds = 0.0
    }

    /// Runs `op(i)` for i in 0..<n, timing every `stride`-th call.
    func timed(_ n: Int, stride: Int, _ op: (Int) throws -> Void) rethrows -> Timing {
        try Self.timed(n, stride: stride, op)
    }

    static func timed(_ n: Int, stride: Int, _ op: (Int) throws -> Void) rethrows -> Timing {
        var t = Timing()
        let start = ProcessProbe.now()
        for i in 0..<n {
            if i % stride == 0 {
                let t0 = ProcessProbe.now()
                try op(i)
                t.histogram.record(ProcessProbe.now() - t0)
            } else {
                try op(i)
            }
        }
        t.seconds = Double(ProcessProbe.now() - start) / 1e9
        return t
    }

    /// Runs `op(thread, i)` on `threads` threads, n operations each.
    func timedThreads(_ threads: Int, _ n: Int, stride: Int, _ op: @escaping @Sendable (Int, Int) throws -> Void) throws -> Timing {
        let parts = Locked<[Timing]>([])
        let failure = Locked<(any Error)?>(nil)
        let start = ProcessProbe.now()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            do {
                let t = try Self.timed(n, stride: stride) { try op(thread, $0) }
                parts.withLock { $0.append(t) }
            } catch {
                failure.withLock { $0 = error }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        var merged = Timing()
        for p in parts.withLock({ $0 }) { merged.histogram.add(p.histogram) }
        merged.seconds = Double(ProcessProbe.now() - start) / 1e9
        return merged
    }

    func record(_ phase: String, _ t: Timing, operations: Int, userBytes: Int, written: Bool, dir: String, writeStart: Int64) {
        let written64 = ProcessProbe.storageWriteBytes() - writeStart
        let r = PhaseResult(
            engine: engine.name, phase: phase, operations: operations, seconds: t.seconds,
            operationsPerSecond: Double(operations) / t.seconds,
            megabytesPerSecond: Double(userBytes) / t.seconds / 1e6,
            p50: Double(t.histogram.valueAtPercentile(50)) / 1000,
            p99: Double(t.histogram.valueAtPercentile(99)) / 1000,
            p999: Double(t.histogram.valueAtPercentile(99.9)) / 1000,
            diskBytes: ProcessProbe.diskBytes(dir), storageWriteBytes: written64,
            writeAmplification: written && userBytes > 0 ? Double(written64) / Double(userBytes) : nil,
            peakResidentBytes: ProcessProbe.peakResidentBytes())
        results.append(r)
        let line = String(format: "%-8@ %-22@ %10.0f op/s %8.1f MB/s  p50 %8.2f µs  p99 %8.2f µs  p999 %9.2f µs  disk %7.1f MiB",
                          engine.name as NSString, phase as NSString, r.operationsPerSecond, r.megabytesPerSecond,
                          r.p50, r.p99, r.p999, Double(r.diskBytes) / 1048576)
        FileHandle.standardError.write((line + "\n").data(using: .utf8)!)
    }

    struct CheckFailed: Error, CustomStringConvertible { var description: String }

    // MARK: Phases

    func fill(_ phase: String, dir: String, n: Int, values: [[UInt8]], order: (Int) -> Int,
              configuration: EngineConfiguration = EngineConfiguration(), closeAfter: Bool) throws -> (any Engine)? {
        let e = try open(dir, configuration)
        let s = try e.makeSession()
        let w0 = ProcessProbe.storageWriteBytes()
        let keys = data.keys
        let t = try timed(n, stride: configuration.sync == .everyWrite ? 1 : 4) { i in
            let k = order(i)
            try values[k & 63].withUnsafeBytes { try s.put(keys[k], $0) }
        }
        try s.flush()
        if closeAfter { try e.close() }
        let bytes = n * (16 + values[0].count)
        record(phase, t, operations: n, userBytes: bytes, written: true, dir: dir, writeStart: w0)
        return closeAfter ? nil : e
    }

    /// The 100-byte phases on one store: a random fill, the open of the cleanly closed store,
    /// random gets, missing-key gets. Returns the store's directory.
    @discardableResult
    func smallValues() throws -> String {
        let main = directory("random")
        let shuffled = data.shuffled
        let filled = try fill("fillrandom-100B", dir: main, n: count, values: small, order: { shuffled[$0] }, closeAfter: false)!
        try filled.close()

        // Open of the filled (cleanly closed) store.
        let t0 = ProcessProbe.now()
        let e = try open(main)
        var openTiming = Timing()
        openTiming.seconds = Double(ProcessProbe.now() - t0) / 1e9
        openTiming.histogram.record(ProcessProbe.now() - t0)
        record("open", openTiming, operations: 1, userBytes: 0, written: false, dir: main, writeStart: ProcessProbe.storageWriteBytes())

        let s = try e.makeSession()
        try readRandom(s, dir: main)
        try readMissing(s, dir: main)
        try e.close()
        return main
    }

    func run() throws {
        let n = count
        _ = try fill("fillseq-100B", dir: directory("seq"), n: n, values: small, order: { $0 }, closeAfter: true)

        let main = try smallValues()
        if supportsThreads {
            // Two writers: engines with transactions commit every write (else one would hold
            // the write lock for 1,000 operations while the other waits).
            let shared = try open(main, EngineConfiguration(writesPerTransaction: 1))
            try mixed(shared, dir: main)
            try shared.close()
        }
        let again = try open(main)
        try delete(again.makeSession(), dir: main)
        try again.close()

        try largeValues()
        try durable()
        try overwrite()
    }

    func readRandom(_ s: any EngineSession, dir: String) throws {
        var rng = XorShift(seed: 7)
        var buffer = [UInt8](repeating: 0, count: 128)
        var wrong = 0
        let keys = data.keys
        let small = self.small
        let t = try timed(count, stride: 4) { _ in
            let k = Int(rng.next() % UInt64(keys.count))
            if try !s.get(keys[k], into: &buffer) || buffer != small[k & 63] { wrong += 1 }
        }
        guard wrong == 0 else { throw CheckFailed(description: "\(engine.name): \(wrong) random reads wrong or missing") }
        record("readrandom", t, operations: count, userBytes: count * 116, written: false, dir: dir, writeStart: ProcessProbe.storageWriteBytes())
    }

    /// The 4 KiB phases: a random fill of count / 10 values, then random gets of them.
    func largeValues() throws {
        var rng = XorShift(seed: 11)
        let largeOrder = Array(0..<max(1, count / 10)).shuffled(using: &rng)
        _ = try fill("fillrandom-4KiB", dir: directory("large"), n: largeOrder.count, values: large,
                     order: { largeOrder[$0] }, closeAfter: true)
        try readRandomLarge(dir: directory("large"), keys: largeOrder.count)
    }

    /// Random gets of the 4 KiB values (reopened store, every value checked).
    func readRandomLarge(dir: String, keys n: Int) throws {
        let e = try open(dir)
        let s = try e.makeSession()
        var rng = XorShift(seed: 12)
        var buffer = [UInt8](repeating: 0, count: 4200)
        var wrong = 0
        let keys = data.keys, large = self.large
        let t = try timed(count, stride: 4) { _ in
            let k = Int(rng.next() % UInt64(n))
            if try !s.get(keys[k], into: &buffer) || buffer != large[k & 63] { wrong += 1 }
        }
        try e.close()
        guard wrong == 0 else { throw CheckFailed(description: "\(engine.name): \(wrong) random 4 KiB reads wrong or missing") }
        record("readrandom-4KiB", t, operations: count, userBytes: count * (16 + 4096), written: false, dir: dir, writeStart: ProcessProbe.storageWriteBytes())
    }

    func readMissing(_ s: any EngineSession, dir: String) throws {
        var rng = XorShift(seed: 8)
        var buffer = [UInt8](repeating: 0, count: 128)
        var found = 0
        let missing = data.missing
        let t = try timed(count, stride: 4) { _ in
            if try s.get(missing[Int(rng.next() % UInt64(missing.count))], into: &buffer) { found += 1 }
        }
        guard found == 0 else { throw CheckFailed(description: "\(engine.name): \(found) missing keys found") }
        record("readmissing", t, operations: count, userBytes: 0, written: false, dir: dir, writeStart: ProcessProbe.storageWriteBytes())
    }

    /// 90% reads, 10% overwrites (same value, so reads stay checkable), 2 threads.
    func mixed(_ e: any Engine, dir: String) throws {
        // Engines with transactions commit each write here (two writers contend for one lock).
        let sessions = try (0..<2).map { _ in UncheckedBox(try e.makeSession()) }
        let perThread = count / 2
        let keys = data.keys, small = self.small
        let wrong = Locked(0)
        let w0 = ProcessProbe.storageWriteBytes()
        let t = try timedThreads(2, perThread, stride: 4) { thread, _ in
            let s = sessions[thread].value
            let r = sessions[thread].next()
            let k = Int(r % UInt64(keys.count))
            if (r >> 40) % 10 == 0 {
                try small[k & 63].withUnsafeBytes { try s.put(keys[k], $0) }
            } else {
                let box = sessions[thread]
                if try !s.get(keys[k], into: &box.buffer) || box.buffer != small[k & 63] { wrong.withLock { $0 += 1 } }
            }
        }
        for box in sessions { try box.value.flush() }
        guard wrong.withLock({ $0 }) == 0 else { throw CheckFailed(description: "\(engine.name): mixed reads wrong") }
        record("mixed-90r10w-2threads", t, operations: perThread * 2, userBytes: perThread * 2 * 116, written: true, dir: dir, writeStart: w0)
        // Write amplification is meaningless here (90% reads): keep the figure but drop the ratio.
        results[results.count - 1].writeAmplification = nil
    }

    func delete(_ s: any EngineSession, dir: String) throws {
        let n = count / 5
        let keys = data.keys, shuffled = data.shuffled
        let w0 = ProcessProbe.storageWriteBytes()
        let t = try timed(n, stride: 4) { i in try s.delete(keys[shuffled[keys.count - 1 - i]]) }
        try s.flush()
        var buffer: [UInt8] = []
        for i in stride(from: 0, to: n, by: max(1, n / 1000)) where try s.get(keys[shuffled[keys.count - 1 - i]], into: &buffer) {
            throw CheckFailed(description: "\(engine.name): a deleted key is still there")
        }
        record("delete", t, operations: n, userBytes: n * 16, written: true, dir: dir, writeStart: w0)
    }

    func durable() throws {
        let keys = data.keys, small = self.small, shuffled = data.shuffled
        let n = min(2000, count)
        _ = try fill("sync-every-write", dir: directory("durable-1"), n: n, values: small, order: { shuffled[$0] },
                     configuration: EngineConfiguration(sync: .everyWrite), closeAfter: true)
        if supportsThreads {
            let dir = directory("durable-2")
            let e = try open(dir, EngineConfiguration(sync: .everyWrite))
            let sessions = try (0..<2).map { _ in UncheckedBox(try e.makeSession()) }
            let w0 = ProcessProbe.storageWriteBytes()
            let per = n / 2
            let t = try timedThreads(2, per, stride: 1) { thread, i in
                let k = shuffled[thread * per + i]
                try small[k & 63].withUnsafeBytes { try sessions[thread].value.put(keys[k], $0) }
            }
            try e.close()
            record("sync-every-write-2threads", t, operations: per * 2, userBytes: per * 2 * 116, written: true, dir: dir, writeStart: w0)
        }
        _ = try fill("sync-every-1000", dir: directory("durable-1000"), n: max(1000, count / 5), values: small,
                     order: { shuffled[$0] }, configuration: EngineConfiguration(sync: .every1000), closeAfter: true)
    }

    /// A cache at steady state: random overwrites over the whole key space, 3x the key count.
    /// Cask runs with a byte limit (64 MiB per million keys); the peers keep everything.
    func overwrite() throws {
        let dir = directory("overwrite")
        let limit = Int64(64 << 20) * Int64(count) / 1_000_000
        let e = try open(dir, EngineConfiguration(byteLimit: limit))
        let s = try e.makeSession()
        let n = count * 3
        let keys = data.keys, small = self.small
        var rng = XorShift(seed: 9)
        let sampleEvery = max(1, n / 60)
        let w0 = ProcessProbe.storageWriteBytes()
        var t = Timing()
        let start = ProcessProbe.now()
        for i in 0..<n {
            let k = Int(rng.next() % UInt64(keys.count))
            if i % 4 == 0 {
                let t0 = ProcessProbe.now()
                try small[k & 63].withUnsafeBytes { try s.put(keys[k], $0) }
                t.histogram.record(ProcessProbe.now() - t0)
            } else {
                try small[k & 63].withUnsafeBytes { try s.put(keys[k], $0) }
            }
            if i % sampleEvery == 0 {
                samples.append(DiskSample(engine: engine.name, bytesPut: Int64(i) * 116, diskBytes: ProcessProbe.diskBytes(dir)))
            }
        }
        try s.flush()
        t.seconds = Double(ProcessProbe.now() - start) / 1e9
        try e.close()
        samples.append(DiskSample(engine: engine.name, bytesPut: Int64(n) * 116, diskBytes: ProcessProbe.diskBytes(dir)))
        record("overwrite", t, operations: n, userBytes: n * 116, written: true, dir: dir, writeStart: w0)
    }
}

/// A session and its thread's scratch state, handed to exactly one thread.
final class UncheckedBox: @unchecked Sendable {
    let value: any EngineSession
    var rng: XorShift
    var buffer = [UInt8](repeating: 0, count: 128)
    nonisolated(unsafe) static var seeds: UInt64 = 100
    init(_ value: any EngineSession) {
        self.value = value
        Self.seeds += 1
        rng = XorShift(seed: Self.seeds)
    }
    func next() -> UInt64 { rng.next() }
}

/// A value behind a mutex (pthread), for the threaded phases' results.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock(); defer { lock.unlock() }
        return try body(&value)
    }
}
