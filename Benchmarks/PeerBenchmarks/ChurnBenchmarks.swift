import Benchmark
import PeerEngines

// The churn workload of `cask-versus churn`, short: fill 100,000 keys (not measured), then
// 1,000,000 random overwrites per iteration, 16-byte keys, 100-byte values, no sync, one
// thread, for each churn engine (Cask without a limit, Cask with only a byte limit, the
// buffered append log, RocksDB, LevelDB, LMDB). package-benchmark measures whole iterations;
// per-put latencies, windows, disk use and write amplification are `cask-versus churn`.

/// Keys filled before each churn iteration.
let churnKeyCount = 100_000

/// cask-limit's byte limit here: the 96 MiB of `cask-versus churn` for 1,000,000 keys, scaled
/// to `churnKeyCount` keys so that the limit binds as hard.
let churnByteLimit = CaskLimitEngine.defaultByteLimit * Int64(churnKeyCount) / 1_000_000

/// Registers one churn benchmark per churn engine.
func registerChurnBenchmarks(values: [[UInt8]]) {
    let keys = (0..<churnKeyCount).map(key)
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 0,
        scalingFactor: .mega,
        maxDuration: .seconds(10),
        maxIterations: 3
    )
    for type in churnEngines {
        let engineConfiguration = EngineConfiguration(byteLimit: type == CaskLimitEngine.self ? churnByteLimit : nil)
        Benchmark("\(type.name): churn, random overwrite of 100,000 keys", configuration: configuration) { benchmark in
            let store = try OpenEngine(type, fill: churnKeyCount, keys: keys, values: values, configuration: engineConfiguration)
            var x: UInt64 = 88_172_645_463_325_252
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17
                let k = Int(x % UInt64(churnKeyCount))
                try values[k & 63].withUnsafeBytes { try store.session.put(keys[k], $0) }
            }
            try store.session.flush()
            benchmark.stopMeasurement()
            try store.finish()
        }
    }
}
