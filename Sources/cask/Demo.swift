import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

/// The README's main job: a realistic cache workload on a store in a local folder.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write, read back, overwrite and delete a realistic workload, reopen, verify, and report speeds.")

    @Argument(help: "The store directory (created; emptied first when it already holds a store).")
    var directory: String = "cask-demo"
    @Option(parsing: .unconditional, help: "Number of small items (profile-like JSON, 100-900 bytes; at most 100,000,000).") var items = 200_000
    @Option(parsing: .unconditional, help: "Number of large items (64 KiB, incompressible, like thumbnails; at most 1,000,000).") var blobs = 200

    func validate() throws {
        try ArgumentValues.count(items, option: "--items", maximum: 100_000_000)
        try ArgumentValues.count(blobs, option: "--blobs", maximum: 1_000_000)
    }

    /// Deterministic content for item `i` at `version`, so reads can be checked without a copy.
    static func value(_ i: Int, version: Int) -> Data {
        var text = "{\"id\":\(i),\"version\":\(version),\"name\":\"user \(i)\",\"bio\":\""
        let words = ["swift", "cache", "disk", "segment", "record", "index", "fast", "crash", "safe"]
        var x = UInt64(truncatingIfNeeded: i &* 2_654_435_761 &+ version)
        let target = 100 + Int(x % 800)
        while text.utf8.count < target {
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            text += words[Int(x >> 59) % words.count] + " "
        }
        return Data((text + "\"}").utf8)
    }

    static func blob(_ i: Int) -> Data {
        var x = UInt64(i + 1) &* 0x9E37_79B9_7F4A_7C15
        var bytes = [UInt8](repeating: 0, count: 64 << 10)
        for j in 0..<bytes.count {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            bytes[j] = UInt8(truncatingIfNeeded: x)
        }
        return Data(bytes)
    }

    func key(_ i: Int) -> String { "user:\(String(format: "%08d", i)):profile" }

    /// Prints one timed step: what, how many operations, seconds and rate.
    private func line(_ what: String, _ count: Int, _ d: Duration) {
        let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        let label = what.padding(toLength: 36, withPad: " ", startingAt: 0)
        print("  \(label)" + String(format: "%9d ops %8.3f s  ", count, seconds) + Formatting.rate(Double(count), per: seconds))
    }

    /// Runs `body` and prints its time as one step.
    private func step(_ what: String, _ count: Int, _ body: () throws -> Void) throws {
        let d = try withStoreErrors { try ContinuousClock().measure(body) }
        line(what, count, d)
    }

    /// The demo as a list of steps: fill, check, change, close, reopen, check again, verify.
    func run() throws {
        print("Cask demo: a store in \(directory)")
        var store = try openStore(directory, for: .create)
        defer { try? store.close() }   // on every path: no store left to a background thread at exit
        try withStoreErrors { try store.removeAll() }
        var wrong = 0
        try step("put (then one sync)", items + blobs) { try fill(store) }
        try step("get and check every value", items + blobs) { wrong += try countWrongValues(store, changed: false) }
        try step("overwrite half (a tenth with TTL)", items / 2) {
            for i in stride(from: 0, to: items, by: 2) {
                try store.setValue(Self.value(i, version: 1), forKey: key(i), timeToLive: i % 10 == 0 ? .seconds(3600) : nil)
            }
        }
        try step("delete a tenth", items / 10) { for i in stride(from: 1, to: items, by: 10) { try store.removeValue(forKey: key(i)) } }
        let before = store.statistics
        try step("close (sync + index snapshot)", 1) { try store.close() }
        let d = try ContinuousClock().measure { store = try openStore(directory, for: .change) }
        let reopened = store.statistics
        line("reopen (index loaded)", reopened.itemCount, d)
        try step("get and check after reopen", items) { wrong += try countWrongValues(store, changed: true) }
        let report = try withStoreErrors { () throws -> StoreVerifier.Report in
            try store.close()
            return try StoreVerifier(directory: directory).verify()
        }
        try summarize(reopened, before: before, report: report, wrong: wrong)
    }

    /// Writes every item and blob, then syncs.
    private func fill(_ store: DiskStore) throws {
        for i in 0..<items { try store.setValue(Self.value(i, version: 0), forKey: key(i)) }
        for b in 0..<blobs { try store.setValue(Self.blob(b), forKey: "thumbnail:\(b)") }
        try store.sync()
    }

    /// Reads every item (and, before the changes, every blob) and counts those that differ from
    /// what the demo wrote: after the changes, even items at version 1 and every tenth gone.
    private func countWrongValues(_ store: DiskStore, changed: Bool) throws -> Int {
        var wrong = 0
        for i in 0..<items {
            let expected: Data? = !changed ? Self.value(i, version: 0)
                : i % 10 == 1 ? nil : Self.value(i, version: i % 2 == 0 ? 1 : 0)
            if try store.value(forKey: key(i)) != expected { wrong += 1 }
        }
        if !changed { for b in 0..<blobs where try store.value(forKey: "thumbnail:\(b)") != Self.blob(b) { wrong += 1 } }
        return wrong
    }

    /// Prints what the store holds and what verify found; exits 1 on any wrong value, damage or
    /// a wrong item count.
    private func summarize(_ stats: StoreStatistics, before: StoreStatistics, report: StoreVerifier.Report, wrong: Int) throws {
        let deletes = items / 10
        print("")
        print("  items \(stats.itemCount) (expected \(items + blobs - deletes)), before reopen \(before.itemCount)")
        print("  live \(Formatting.bytes(stats.liveBytes)), on disk \(Formatting.bytes(stats.fileBytes)) in \(stats.segmentCount) segments, dead \(Formatting.bytes(stats.deadBytes))")
        if stats.indexLoadedFromSnapshot {
            print("  reopen loaded the index snapshot written at close (no hint file read, no segment scanned)")
        } else {
            print("  reopen read \(stats.segmentsLoadedFromHints) hint files and scanned \(stats.segmentsScanned) segments")
        }
        print("  verify: \(report.records) records in \(report.segments) segments, \(report.isClean ? "no damage" : "\(report.problems.count) problems, \(report.unreadable.count) unreadable ranges")")
        for problem in report.problems { print("  DAMAGED \(problem)") }
        for range in report.unreadable { print("  UNREADABLE \(range)") }   // the file, the offset and why, as `cask verify` prints them
        print("  wrong or missing values: \(wrong)")
        if wrong > 0 || !report.isClean || stats.itemCount != items + blobs - deletes { throw Exit.no }
    }
}
