import Benchmark
import Cask
import Foundation

// The memory layer alone and the two-level facade.

let keys = (0..<100_000).map { "key-\($0)" }

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 1,
        scalingFactor: .mega,
        maxDuration: .seconds(5),
        maxIterations: 10
    )

    Benchmark("memory get, 1 thread") { benchmark in
        let cache = MemoryCache<Int>(limits: .init(countLimit: 200_000))
        for (i, k) in keys.enumerated() { cache.setValue(i, forKey: k) }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations { blackHole(cache.value(forKey: keys[i % 100_000])) }
    }

    Benchmark("memory get, 2 threads (total)") { benchmark in
        let cache = MemoryCache<Int>(limits: .init(countLimit: 200_000))
        for (i, k) in keys.enumerated() { cache.setValue(i, forKey: k) }
        let n = benchmark.scaledIterations.count
        benchmark.startMeasurement()
        DispatchQueue.concurrentPerform(iterations: 2) { t in
            for i in 0..<(n / 2) { blackHole(cache.value(forKey: keys[(i * 2 + t) % 100_000])) }
        }
    }

    Benchmark("memory set, 1 thread") { benchmark in
        let cache = MemoryCache<Int>(limits: .init(countLimit: 50_000))
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations { cache.setValue(i, forKey: keys[i % 100_000], cost: 8) }
    }

    Benchmark("facade get, memory hit", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let path = NSTemporaryDirectory() + "cask-bench-facade-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let cache = try CaskCache(directory: path)
        for i in 0..<1000 { try cache.setValue(i, forKey: keys[i]) }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations { blackHole(try cache.value(Int.self, forKey: keys[i % 1000])) }
        benchmark.stopMeasurement()
        try cache.close()
    }

    Benchmark("facade get, from disk (memory layer emptied)", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let path = NSTemporaryDirectory() + "cask-bench-facade-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var options = CacheOptions()
        options.memory = .init(countLimit: 1)
        let cache = try CaskCache(directory: path, options: options)
        for i in 0..<10_000 { try cache.setValue("value number \(i)", forKey: keys[i]) }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations { blackHole(try cache.value(String.self, forKey: keys[(i &* 7919) % 10_000])) }
        benchmark.stopMeasurement()
        try cache.close()
    }
}
