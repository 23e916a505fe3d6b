import ArgumentParser
import Cask
import CaskBaselines
import CaskToolSupport
import Foundation

/// `cask-harness growth`: a store that grows. Puts `--count` new keys (20-byte values,
/// compaction off), every put timed, and prints each put over 1 ms with how many keys the
/// store held then: the growth steps of the index's arrays and tables show as the counts
/// where they happen.
struct GrowthBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "growth",
        abstract: "Put new keys with every put timed; print the puts over 1 ms and the key count at each.")

    @Option(help: "Scratch directory (a fresh folder inside it is used and removed).") var directory = NSTemporaryDirectory()
    @Option(help: "New keys put.") var count = 2_500_000

    func validate() throws { try ArgumentValues.count(count, option: "--count", minimum: 1) }

    func run() throws {
        let path = (directory as NSString).appendingPathComponent("cask-growth-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: path) }   // harmless: a scratch folder
        var options = StoreOptions()
        options.durability = .none
        options.compaction.isAutomatic = false
        let store = try DiskStore(directory: path, options: options)
        let value = Data(repeating: 1, count: 20)
        var slow: [(Int, UInt64)] = []
        var latencies = [UInt64](repeating: 0, count: count)   // allocated and touched before the timing
        for i in 0..<count {
            let start = StallWatch.now()
            try store.setValue(value, forKey: "k\(i)")
            let took = StallWatch.now() - start
            latencies[i] = took
            if took > 1_000_000 { slow.append((i, took)) }
        }
        try store.close()
        for (i, took) in slow { print(String(format: "put of key %d: %.2f ms", i, Double(took) / 1e6)) }
        latencies.sort()
        func p(_ q: Double) -> String { String(format: "%.1f", Double(latencies[min(count - 1, Int(Double(count) * q))]) / 1000) }
        print("\(slow.count) of \(count) puts over 1 ms; p99 \(p(0.99)) µs, p99.99 \(p(0.9999)) µs, max \(String(format: "%.2f", Double(latencies.last ?? 0) / 1e6)) ms")
    }
}
