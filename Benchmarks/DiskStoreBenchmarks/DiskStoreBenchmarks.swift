import Benchmark
import Cask
import Foundation

// Single-operation figures for the disk store. Keys are 16 bytes, values 100 bytes (half
// compressible) unless the name says otherwise; every store lives in its own temporary folder.

func temporaryStore(_ name: String, durability: Durability = .none, compression: CompressionPolicy = .default) -> (DiskStore, String) {
    let path = NSTemporaryDirectory() + "cask-bench-\(name)-\(UUID().uuidString)"
    var options = StoreOptions()
    options.durability = durability
    options.compression = compression
    return (try! DiskStore(directory: path, options: options), path)
}

func key(_ i: Int) -> String {
    // 16 bytes: "k" + 15 digits.
    let digits = String(i)
    return "k" + String(repeating: "0", count: 15 - digits.count) + digits
}

/// Half-compressible bytes: a random half and a repeated half.
func value(_ size: Int, seed: Int) -> Data {
    var x = UInt64(seed &+ 1) &* 0x9E37_79B9_7F4A_7C15
    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: size)
    for i in 0..<(size / 2) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17
        bytes[i] = UInt8(truncatingIfNeeded: x)
    }
    return Data(bytes)
}

let keyCount = 100_000

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 1,
        scalingFactor: .kilo,
        maxDuration: .seconds(5),
        maxIterations: 20
    )

    let values = (0..<64).map { value(100, seed: $0) }
    let keys = (0..<keyCount).map(key)

    Benchmark("put 100 B, no sync") { benchmark in
        let (store, path) = temporaryStore("put")
        defer { try? store.close(); try? FileManager.default.removeItem(atPath: path) }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            try store.setValue(values[i & 63], forKey: keys[i % keyCount])
        }
        benchmark.stopMeasurement()
    }

    Benchmark("put 100 B, sync every write", configuration: .init(scalingFactor: .one, maxDuration: .seconds(3), maxIterations: 5)) { benchmark in
        let (store, path) = temporaryStore("putsync", durability: .everyWrite)
        defer { try? store.close(); try? FileManager.default.removeItem(atPath: path) }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            try store.setValue(values[i & 63], forKey: keys[i % keyCount])
        }
        benchmark.stopMeasurement()
    }

    for (label, size, policy) in [("100 B, LZ4 off", 100, CompressionPolicy.never), ("100 B, LZ4 always", 100, .always),
                                  ("4 KiB, LZ4 off", 4096, .never), ("4 KiB, LZ4 automatic", 4096, .default)] {
        let payloads = (0..<64).map { value(size, seed: $0) }
        Benchmark("put \(label)") { benchmark in
            let (store, path) = temporaryStore("lz4", compression: policy)
            defer { try? store.close(); try? FileManager.default.removeItem(atPath: path) }
            benchmark.startMeasurement()
            for i in benchmark.scaledIterations {
                try store.setValue(payloads[i & 63], forKey: keys[i % keyCount])
            }
            benchmark.stopMeasurement()
        }
    }

    Benchmark("get existing 100 B") { benchmark in
        let (store, path) = temporaryStore("get")
        defer { try? store.close(); try? FileManager.default.removeItem(atPath: path) }
        for i in 0..<keyCount { try store.setValue(values[i & 63], forKey: keys[i]) }
        try store.sync()
        benchmark.startMeasurement()
        var x = 1
        for _ in benchmark.scaledIterations {
            x = (x &* 1_103_515_245 &+ 12345) & 0x7fff_ffff
            blackHole(try store.value(forKey: keys[x % keyCount]))
        }
        benchmark.stopMeasurement()
    }

    Benchmark("get missing") { benchmark in
        let (store, path) = temporaryStore("miss")
        defer { try? store.close(); try? FileManager.default.removeItem(atPath: path) }
        for i in 0..<keyCount { try store.setValue(values[i & 63], forKey: keys[i]) }
        let missing = (0..<keyCount).map { "m" + keys[$0].dropFirst() }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            blackHole(try store.value(forKey: missing[i % keyCount]))
        }
        benchmark.stopMeasurement()
    }

    for hints in [true, false] {
        Benchmark("open 1,000,000 keys, \(hints ? "from hint files" : "by scanning")",
                  configuration: .init(metrics: [.wallClock, .peakMemoryResident], scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 5)) { benchmark in
            let path = NSTemporaryDirectory() + "cask-bench-open-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: path) }
            var options = StoreOptions()
            options.durability = .none
            do {
                let store = try DiskStore(directory: path, options: options)
                for i in 0..<1_000_000 { try store.setValue(values[i & 63], forKey: key(i)) }
                try store.close()
            }
            if !hints {
                for name in try FileManager.default.contentsOfDirectory(atPath: path) where name.hasSuffix(".hint") {
                    try FileManager.default.removeItem(atPath: path + "/" + name)
                }
            }
            benchmark.startMeasurement()
            let store = try DiskStore(directory: path, options: options)
            benchmark.stopMeasurement()
            precondition(store.count == 1_000_000)
            try store.close()
            if !hints {
                // close() rewrote only the active segment's hint; keep the others missing.
                for name in try FileManager.default.contentsOfDirectory(atPath: path) where name.hasSuffix(".hint") {
                    try FileManager.default.removeItem(atPath: path + "/" + name)
                }
            }
        }
    }
}
