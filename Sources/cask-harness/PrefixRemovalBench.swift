import ArgumentParser
import Cask
import CaskBaselines
import CaskToolSupport
import Foundation
import Synchronization

/// `cask-harness prefix-removal`: what `removeValues(withPrefix:)` costs. Fills `--count` keys,
/// every other one under the prefix `a/`, times one removal of `a/` alone, then one with
/// another thread overwriting the `b/` keys throughout and every one of those puts timed (the
/// walk takes the lock in slices: no put should wait long); then, on a store filled the same way, the
/// same keys removed one `removeValue(forKey:)` at a time, as an app without the call would.
struct PrefixRemovalBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefix-removal",
        abstract: "Time removeValues(withPrefix:) over a filled store, with puts from another thread timed meanwhile.")

    @Option(help: "Scratch directory (fresh folders inside it are used and removed).") var directory = NSTemporaryDirectory()
    @Option(help: "Keys filled first (half of them under the prefix).") var count = 1_000_000

    func validate() throws { try ArgumentValues.count(count, option: "--count", minimum: 2) }

    func run() throws {
        let alone = try timedRemoval(withWriter: false)
        let contended = try timedRemoval(withWriter: true)
        let (other, otherPath) = try filled()
        defer { try? FileManager.default.removeItem(atPath: otherPath) }   // harmless: a scratch folder
        let oneByOneStart = StallWatch.now()
        for i in stride(from: 0, to: count, by: 2) { try other.removeValue(forKey: Self.key(i)) }
        try other.sync()
        let oneByOne = Double(StallWatch.now() - oneByOneStart) / 1e6
        try other.close()

        print(String(format: "removeValues(withPrefix:) over %d keys, %d removed: %.1f ms alone (%.1f ms per million keys walked); one removeValue per key and a sync: %.1f ms (%.1fx the call)",
                     count, alone.removed, alone.ms, alone.ms * 1e6 / Double(count), oneByOne, oneByOne / alone.ms))
        print(String(format: "with another thread overwriting b/ keys meanwhile: %.1f ms; its puts (from 20 ms before the call to its end): %d, max %.3f ms, over 1 ms: %d",
                     contended.ms, contended.puts.count, Double(contended.puts.max() ?? 0) / 1e6, contended.puts.filter { $0 > 1_000_000 }.count))
    }

    /// One removal of `a/` over a filled store, alone or with a thread overwriting the `b/` keys.
    private func timedRemoval(withWriter: Bool) throws -> (removed: Int, ms: Double, puts: [UInt64]) {
        let (store, path) = try filled()
        defer { try? FileManager.default.removeItem(atPath: path) }   // harmless: a scratch folder
        let writer = TimedWriter(store: store, count: count)
        if withWriter {
            writer.start()
            usleep(20_000)
        }
        let start = StallWatch.now()
        let removed = try store.removeValues(withPrefix: "a/")
        let ms = Double(StallWatch.now() - start) / 1e6
        let puts = withWriter ? writer.finish() : []
        try store.close()
        return (removed, ms, puts)
    }

    static func key(_ i: Int) -> String { (i % 2 == 0 ? "a/" : "b/") + String(i) }

    /// A store in a fresh folder holding `count` keys of 100 bytes, half under `a/`.
    func filled() throws -> (DiskStore, String) {
        let path = (directory as NSString).appendingPathComponent("cask-prefix-\(UUID().uuidString)")
        var options = StoreOptions()
        options.durability = .none
        let store = try DiskStore(directory: path, options: options)
        let value = Data(repeating: 7, count: 100)
        for i in 0..<count { try store.setValue(value, forKey: Self.key(i)) }
        try store.sync()
        return (store, path)
    }
}

/// Overwrites the `b/` keys on its own thread until told to finish, timing each put (nanoseconds).
final class TimedWriter: @unchecked Sendable {
    // @unchecked: `times` is written by the thread and read only after it has finished.
    private let store: DiskStore
    private let count: Int
    private let stop = Atomic<Bool>(false)
    private var times: [UInt64] = []
    private let done = DispatchSemaphore(value: 0)

    /// The key the thread's `i`-th put overwrites (`i` below `count / 2`).
    private let keys: @Sendable (Int) -> String

    init(store: DiskStore, count: Int, keys: @escaping @Sendable (Int) -> String = { PrefixRemovalBench.key(2 * $0 + 1) }) {
        self.store = store
        self.count = count
        self.keys = keys
    }

    func start() {
        Thread {
            let value = Data(repeating: 9, count: 100)
            var i = 0
            while !self.stop.load(ordering: .relaxed) {
                let t = StallWatch.now()
                // Overwrites (a new key could make the index grow, which is timed by other benchmarks).
                _ = try? self.store.setValue(value, forKey: self.keys(i % (self.count / 2)))   // timing only: a failure shows as a missing put
                self.times.append(StallWatch.now() - t)
                i += 1
            }
            self.done.signal()
        }.start()
    }

    /// Stops the thread and returns every put's time.
    func finish() -> [UInt64] {
        stop.store(true, ordering: .relaxed)
        done.wait()
        return times
    }
}
