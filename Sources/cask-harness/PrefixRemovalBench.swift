import ArgumentParser
import Cask
import CaskBaselines
import CaskToolSupport
import Foundation
import Synchronization

/// `cask-harness prefix-removal`: what `removeValues(withPrefix:)` costs. Fills `--count` keys,
/// every other one under the prefix `a/`, times one removal of `a/`, with another thread
/// putting keys `b/...` throughout and every one of those puts timed (the walk takes the lock
/// in slices: no put should wait long); then, on a second store filled the same way, the
/// same keys removed one `removeValue(forKey:)` at a time, as an app without the call would.
struct PrefixRemovalBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefix-removal",
        abstract: "Time removeValues(withPrefix:) over a filled store, with puts from another thread timed meanwhile.")

    @Option(help: "Scratch directory (fresh folders inside it are used and removed).") var directory = NSTemporaryDirectory()
    @Option(help: "Keys filled first (half of them under the prefix).") var count = 1_000_000

    func validate() throws { try ArgumentValues.count(count, option: "--count", minimum: 2) }

    func run() throws {
        let (store, path) = try filled()
        defer { try? FileManager.default.removeItem(atPath: path) }   // harmless: a scratch folder
        let writer = TimedWriter(store: store)
        writer.start()
        usleep(20_000)
        let start = StallWatch.now()
        let removed = try store.removeValues(withPrefix: "a/")
        let ms = Double(StallWatch.now() - start) / 1e6
        let puts = writer.finish()
        try store.close()

        let (other, otherPath) = try filled()
        defer { try? FileManager.default.removeItem(atPath: otherPath) }   // harmless: a scratch folder
        let oneByOneStart = StallWatch.now()
        for i in stride(from: 0, to: count, by: 2) { try other.removeValue(forKey: Self.key(i)) }
        try other.sync()
        let oneByOne = Double(StallWatch.now() - oneByOneStart) / 1e6
        try other.close()

        print(String(format: "removeValues(withPrefix:) over %d keys: %d removed in %.1f ms (%.1f ms per million keys walked); one removeValue per key and a sync: %.1f ms (%.1fx)",
                     count, removed, ms, ms * 1e6 / Double(count), oneByOne, oneByOne / ms))
        print(String(format: "puts from another thread (from 20 ms before the call to its end): %d, max %.3f ms, over 1 ms: %d",
                     puts.count, Double(puts.max() ?? 0) / 1e6, puts.filter { $0 > 1_000_000 }.count))
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

/// Puts `b/w...` keys on its own thread until told to finish, timing each (nanoseconds).
final class TimedWriter: @unchecked Sendable {
    // @unchecked: `times` is written by the thread and read only after it has finished.
    private let store: DiskStore
    private let stop = Atomic<Bool>(false)
    private var times: [UInt64] = []
    private let done = DispatchSemaphore(value: 0)

    init(store: DiskStore) { self.store = store }

    func start() {
        Thread {
            let value = Data(repeating: 9, count: 100)
            var i = 0
            while !self.stop.load(ordering: .relaxed) {
                let t = StallWatch.now()
                _ = try? self.store.setValue(value, forKey: "b/w\(i)")   // timing only: a failure shows as a missing put
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
