import CaskBaselines
import Foundation
import PeerEngines

/// The churn workload against one engine, in one process: fill `keys` keys in a random order,
/// then `puts` overwrites of uniformly random keys from one thread, every put timed. Disk use
/// and the process's storage writes are sampled on a background thread meanwhile.
struct ChurnRunner {
    let engine: any Engine.Type
    let scratch: String
    let keys: Int
    let puts: Int
    let byteLimit: Int64?
    let windowMilliseconds: Int
    /// 64 values of 100 bytes, half random and half one repeated byte (as the other phases).
    let values = WorkloadData.values(size: 100)

    var configuration: EngineConfiguration {
        EngineConfiguration(sync: .none, byteLimit: engine == CaskLimitEngine.self ? byteLimit : nil)
    }

    func run() throws -> ChurnResult {
        let directory = scratch + "/store"
        let names = (0..<keys).map { WorkloadData.key("k", $0) }
        let store = try engine.init(directory: directory, configuration: configuration)
        let session = try store.makeSession()
        let fillSeconds = try fill(session, names)
        note("filled \(keys) keys in \(String(format: "%.2f", fillSeconds)) s; churning \(puts) puts")

        let writeBase = ProcessProbe.storageWriteBytes()
        let cancelledBase = ProcessProbe.cancelledWriteBytes()
        let syscallBase = ProcessProbe.syscallWriteBytes()
        let ownBase = ownWrites(store)
        let origin = ProcessProbe.now()
        let sampler = DiskSampler(directory: directory, intervalNanoseconds: windowNanoseconds, origin: origin, writeBase: writeBase)
        sampler.start()
        let watch = StallWatch()
        let log = try churn(session, names, origin: origin)
        let seconds = Double(ProcessProbe.now() - origin) / 1e9
        watch.stop()
        let machine = MachineStalls(lateWakeUps: watch.count, slowPuts: log.slowPuts.count, slowPutsInStalls: watch.overlapping(log.slowPuts))
        try session.flush()
        let own = ownWrites(store).flatMap { now in ownBase.map { (now.0 - $0.0, now.1 - $0.1) } }
        // Disk use while the store is open; after close, measured apart (a clean close may
        // write files of its own, such as Cask's index snapshot).
        let samples = sampler.stop()
        let closeStart = ProcessProbe.now()
        try store.close()
        let closeSeconds = Double(ProcessProbe.now() - closeStart) / 1e9
        let diskAfterClose = ProcessProbe.diskBytes(directory)
        let peakResident = ProcessProbe.peakResidentBytes()   // the fill and the churn (not the reopen)
        let reopen = try reopenAndClose(directory, names)
        let writes = Writes(
            storage: ProcessProbe.storageWriteBytes() - writeBase, cancelled: ProcessProbe.cancelledWriteBytes() - cancelledBase,
            syscall: ProcessProbe.syscallWriteBytes() - syscallBase, own: own)
        var r = result(log: log, seconds: seconds, fillSeconds: fillSeconds, closeSeconds: closeSeconds, reopen: reopen,
                       samples: samples, writes: writes, store: store, peakResident: peakResident)
        r.diskFinalBytes = diskAfterClose
        r.machineStalls = machine
        return r
    }

    /// Opens the store the churn left (after fill + overwrite, cleanly closed), reads one key
    /// (which must be there unless a byte limit may have evicted it), and closes it again: both
    /// timed, in seconds.
    func reopenAndClose(_ directory: String, _ names: [String]) throws -> (open: Double, close: Double) {
        let start = ProcessProbe.now()
        let store = try engine.init(directory: directory, configuration: configuration)
        let opened = ProcessProbe.now()
        let session = try store.makeSession()
        var buffer = [UInt8](repeating: 0, count: 128)
        guard try session.get(names[0], into: &buffer) || configuration.byteLimit != nil else {
            throw Runner.CheckFailed(description: "\(engine.name): key 0 missing after the reopen")
        }
        let closeStart = ProcessProbe.now()
        try store.close()
        return (Double(opened - start) / 1e9, Double(ProcessProbe.now() - closeStart) / 1e9)
    }

    /// The store's own count of record bytes put and compaction output, since it opened (Cask).
    func ownWrites(_ store: any Engine) -> (Int64, Int64)? {
        (store as? CountsOwnWrites).map { ($0.ownBytesWritten, $0.ownCompactionBytesWritten) }
    }

    var windowNanoseconds: UInt64 { UInt64(windowMilliseconds) * 1_000_000 }

    /// Puts every key once, in a fixed random order; returns the seconds it took.
    func fill(_ session: any EngineSession, _ names: [String]) throws -> Double {
        var order = Array(0..<keys)
        var rng = XorShift(seed: 42)
        order.shuffle(using: &rng)
        let start = ProcessProbe.now()
        for k in order { try values[k & 63].withUnsafeBytes { try session.put(names[k], $0) } }
        try session.flush()
        return Double(ProcessProbe.now() - start) / 1e9
    }

    /// The timed loop: `puts` overwrites of random keys, each one timed on its own.
    func churn(_ session: any EngineSession, _ names: [String], origin: UInt64) throws -> LatencyLog {
        var log = LatencyLog(capacity: puts, windowNanoseconds: windowNanoseconds, origin: origin)
        var rng = XorShift(seed: 9)
        let count = UInt64(keys)
        for _ in 0..<puts {
            let k = Int(rng.next() % count)
            let name = names[k]
            try values[k & 63].withUnsafeBytes { value in
                let start = ProcessProbe.now()
                try session.put(name, value)
                log.record(start: start, end: ProcessProbe.now())
            }
        }
        return log
    }

    /// Bytes written over the churn and the close, by each count.
    struct Writes {
        var storage: Int64
        var cancelled: Int64
        var syscall: Int64
        /// The store's own count (Cask): record bytes put, compaction output.
        var own: (Int64, Int64)?
    }

    func result(log: LatencyLog, seconds: Double, fillSeconds: Double, closeSeconds: Double, reopen: (open: Double, close: Double),
                samples: [DiskPoint], writes: Writes, store: any Engine, peakResident: Int64) -> ChurnResult {
        let sorted = log.sortedDurations()
        let userBytes = Int64(puts) * Int64(16 + values[0].count)
        let limited = store as? CaskLimitEngine
        return ChurnResult(
            engine: engine.name, configuration: engine.configurationNote, keys: keys, puts: puts, valueBytes: values[0].count,
            fillSeconds: fillSeconds, seconds: seconds, closeSeconds: closeSeconds,
            reopenSeconds: reopen.open, secondCloseSeconds: reopen.close, putsPerSecond: Double(puts) / seconds,
            latency: LatencySummary(sorted: sorted),
            windowSummary: WindowSummary(windows: log.windows, windowMilliseconds: windowMilliseconds),
            byteLimit: limited?.byteLimit,
            diskMaxBytes: samples.map(\.diskBytes).max() ?? 0, diskFinalBytes: samples.last?.diskBytes ?? 0,
            userBytes: userBytes, storageWriteBytes: writes.storage, cancelledWriteBytes: writes.cancelled,
            writeAmplification: Double(writes.storage) / Double(userBytes),
            netWriteAmplification: Double(writes.storage - writes.cancelled) / Double(userBytes),
            syscallWriteBytes: writes.syscall, syscallWriteAmplification: Double(writes.syscall) / Double(userBytes),
            ownBytesWritten: writes.own?.0, ownCompactionBytesWritten: writes.own?.1,
            ownWriteAmplification: writes.own.map { Double($0.0 + $0.1) / Double(userBytes) },
            peakResidentBytes: peakResident,
            windows: log.windows, curve: LatencySummary.curve(sorted), diskSamples: samples)
    }

    func note(_ text: String) {
        FileHandle.standardError.write(Data("\(engine.name): \(text)\n".utf8))
    }
}
