import ArgumentParser
import Cask
import CaskBaselines
import CaskToolSupport
import Foundation

/// `cask-harness tag-removal`: what `removeValues(taggedWith:)` costs. Fills `--count` keys of
/// 100 bytes, `--tagged-percent` of them cache entries tagged `a` or `b` (alternately), the
/// rest plain values; times one removal of `a` alone, and with another thread overwriting
/// plain keys throughout (every put timed); then the open that applies the removal record
/// again (no index snapshot), against an open of the same store with the record compacted away.
struct TagRemovalBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tag-removal",
        abstract: "Time removeValues(taggedWith:) over a filled store, and the open that applies it again.")

    @Option(help: "Scratch directory (fresh folders inside it are used and removed).") var directory = NSTemporaryDirectory()
    @Option(help: "Keys filled first.") var count = 1_000_000
    @Option(help: "Percent of the keys that are tagged entries (half tagged a, half b).") var taggedPercent = 10

    func validate() throws {
        try ArgumentValues.count(count, option: "--count", minimum: 2)
        try ArgumentValues.count(taggedPercent, option: "--tagged-percent", minimum: 0)
        guard taggedPercent <= 100 else { throw ValidationError("--tagged-percent must be at most 100 (got \(taggedPercent))") }
    }

    func run() throws {
        let alone = try timedRemoval(withWriter: false)
        let contended = try timedRemoval(withWriter: true)
        print(String(format: "removeValues(taggedWith:) over %d keys (%d%% tagged), %d removed: %.1f ms alone (%.1f ms per million keys walked)",
                     count, taggedPercent, alone.removed, alone.ms, alone.ms * 1e6 / Double(count)))
        print(String(format: "with another thread overwriting plain keys meanwhile: %.1f ms; its puts: %d, max %.3f ms, over 1 ms: %d",
                     contended.ms, contended.puts.count, Double(contended.puts.max() ?? 0) / 1e6, contended.puts.filter { $0 > 1_000_000 }.count))
        print(String(format: "open from hints applying the record: %.1f ms (%d removed at open); the same store once compacted: %.1f ms",
                     alone.reopen.ms, alone.reopen.removed, alone.compactedOpenMs))
    }

    /// Index of the tagged keys: every `100 / taggedPercent`-th key.
    func isTagged(_ i: Int) -> Bool { taggedPercent > 0 && i % max(1, 100 / taggedPercent) == 0 }
    static func key(_ i: Int) -> String { "k/" + String(i) }

    private func timedRemoval(withWriter: Bool) throws -> (removed: Int, ms: Double, puts: [UInt64], reopen: (ms: Double, removed: Int), compactedOpenMs: Double) {
        let (store, path) = try filled()
        defer { try? FileManager.default.removeItem(atPath: path) }   // harmless: a scratch folder
        let writer = TimedWriter(store: store, count: count, keys: { i in TagRemovalBench.key(2 * i + 1) })
        if withWriter {
            writer.start()
            usleep(20_000)
        }
        let start = StallWatch.now()
        let removed = try store.removeValues(taggedWith: "a")
        let ms = Double(StallWatch.now() - start) / 1e6
        let puts = withWriter ? writer.finish() : []
        try store.close()
        guard !withWriter else { return (removed, ms, puts, (0, 0), 0) }
        let reopen = try timedOpen(path, compacting: false)
        let compacted = try timedOpen(path, compacting: true)
        return (removed, ms, puts, reopen, compacted.ms)
    }

    /// Opens the store at `path` without its index snapshot (from hints), timed; with
    /// `compacting`, after a full compaction that drops the removal record.
    private func timedOpen(_ path: String, compacting: Bool) throws -> (ms: Double, removed: Int) {
        if compacting {
            let store = try DiskStore(directory: path, options: options())
            try store.compact()
            try store.close()
        }
        try? FileManager.default.removeItem(atPath: (path as NSString).appendingPathComponent("INDEX"))   // harmless: absent is fine
        let start = StallWatch.now()
        let store = try DiskStore(directory: path, options: options())
        let ms = Double(StallWatch.now() - start) / 1e6
        let removed = store.statistics.keysRemovedByTagAtOpen
        try store.close()
        return (ms, removed)
    }

    func options() -> StoreOptions {
        var options = StoreOptions()
        options.durability = .none
        return options
    }

    /// A store in a fresh folder holding `count` keys of 100 bytes.
    func filled() throws -> (DiskStore, String) {
        let path = (directory as NSString).appendingPathComponent("cask-tag-\(UUID().uuidString)")
        let store = try DiskStore(directory: path, options: options())
        let value = Data(repeating: 7, count: 100)
        let far = Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000
        var tagged = 0
        for i in 0..<count {
            if isTagged(i) {
                let tag = tagged % 2 == 0 ? "a" : "b"
                tagged += 1
                _ = try value.withUnsafeBytes { try store.putEntry($0, forKey: Self.key(i), freshUntil: far, expiry: far, tags: [tag]) }
            } else {
                try store.setValue(value, forKey: Self.key(i))
            }
        }
        try store.sync()
        return (store, path)
    }
}
