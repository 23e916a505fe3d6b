import Benchmark
import Foundation
import PeerEngines

// Single-operation figures for Cask and each peer through the same `Engine` adapters that
// `cask-versus` drives: a random 100-byte put (no sync) and a random get of an existing key in
// a store of 100,000 keys. 16-byte keys, half-compressible values, each store in its own
// temporary folder. The full side-by-side report (fills, deletes, mixed, durable, overwrite,
// latency percentiles, disk use, memory) is `cask-versus run`. The churn benchmarks
// (ChurnBenchmarks.swift) are the suite's short form of `cask-versus churn`.

let keyCount = 100_000

func key(_ i: Int) -> String {
    let digits = String(i)
    return "k" + String(repeating: "0", count: 15 - digits.count) + digits
}

func values() -> [[UInt8]] {
    (0..<64).map { seed in
        var x = UInt64(seed + 1) &* 0x9E37_79B9_7F4A_7C15 | 1
        var bytes = [UInt8](repeating: UInt8(ascii: "v"), count: 100)
        for i in 0..<50 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; bytes[i] = UInt8(truncatingIfNeeded: x) }
        return bytes
    }
}

/// An engine on a fresh folder, filled with `fill` keys; removed by `finish`.
final class OpenEngine {
    let engine: any Engine
    let session: any EngineSession
    let path: String

    init(_ type: any Engine.Type, fill: Int, keys: [String], values: [[UInt8]],
         configuration: EngineConfiguration = EngineConfiguration()) throws {
        path = NSTemporaryDirectory() + "cask-peer-bench-\(type.name)-\(UUID().uuidString)"
        engine = try type.init(directory: path, configuration: configuration)
        session = try engine.makeSession()
        for i in 0..<fill { try values[i & 63].withUnsafeBytes { try session.put(keys[i], $0) } }
        try session.flush()
    }

    func finish() throws {
        try session.flush()
        try engine.close()
        try FileManager.default.removeItem(atPath: path)
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 1,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 30
    )
    let keys = (0..<keyCount).map(key)
    let vals = values()

    for type in allEngines {
        Benchmark("\(type.name): put 100 B, random key") { benchmark in
            let store = try OpenEngine(type, fill: 0, keys: keys, values: vals)
            var x: UInt64 = 88_172_645_463_325_252
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17
                let k = Int(x % UInt64(keyCount))
                try vals[k & 63].withUnsafeBytes { try store.session.put(keys[k], $0) }
            }
            benchmark.stopMeasurement()
            try store.finish()
        }

        Benchmark("\(type.name): get 100 B, random existing key") { benchmark in
            let store = try OpenEngine(type, fill: keyCount, keys: keys, values: vals)
            var buffer = [UInt8](repeating: 0, count: 128)
            var x: UInt64 = 88_172_645_463_325_252
            var found = 0
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17
                if try store.session.get(keys[Int(x % UInt64(keyCount))], into: &buffer) { found += 1 }
            }
            benchmark.stopMeasurement()
            precondition(found == benchmark.scaledIterations.count, "\(type.name) lost keys")
            try store.finish()
        }
    }
    registerChurnBenchmarks(values: vals)
}
