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

    func run() throws {
        let clock = ContinuousClock()
        func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
        func line(_ what: String, _ count: Int, _ d: Duration) {
            let label = what.padding(toLength: 36, withPad: " ", startingAt: 0)
            print("  \(label)" + String(format: "%9d ops %8.3f s  ", count, seconds(d)) + Formatting.rate(Double(count), per: seconds(d)))
        }
        print("Cask demo: a store in \(directory)")
        var store = try openStore(directory, for: .create)
        try withStoreErrors { try store.removeAll() }

        var d = try withStoreErrors {
            try clock.measure {
                for i in 0..<items { try store.setValue(Self.value(i, version: 0), forKey: key(i)) }
                for b in 0..<blobs { try store.setValue(Self.blob(b), forKey: "thumbnail:\(b)") }
                try store.sync()
            }
        }
        line("put (then one sync)", items + blobs, d)

        var wrong = 0
        d = try withStoreErrors {
            try clock.measure {
                for i in 0..<items where try store.value(forKey: key(i)) != Self.value(i, version: 0) { wrong += 1 }
                for b in 0..<blobs where try store.value(forKey: "thumbnail:\(b)") != Self.blob(b) { wrong += 1 }
            }
        }
        line("get and check every value", items + blobs, d)

        let overwrites = items / 2
        d = try withStoreErrors {
            try clock.measure {
                for i in stride(from: 0, to: items, by: 2) {
                    try store.setValue(Self.value(i, version: 1), forKey: key(i), timeToLive: i % 10 == 0 ? .seconds(3600) : nil)
                }
            }
        }
        line("overwrite half (a tenth with TTL)", overwrites, d)

        let deletes = items / 10
        d = try withStoreErrors {
            try clock.measure { for i in stride(from: 1, to: items, by: 10) { try store.removeValue(forKey: key(i)) } }
        }
        line("delete a tenth", deletes, d)

        let before = store.statistics
        d = try withStoreErrors { try clock.measure { try store.close() } }
        line("close (sync + index snapshot)", 1, d)
        d = try clock.measure { store = try openStore(directory, for: .change) }
        let reopened = store.statistics
        line("reopen (index loaded)", reopened.itemCount, d)

        d = try withStoreErrors {
            try clock.measure {
                for i in 0..<items {
                    let expected: Data? = i % 10 == 1 ? nil : Self.value(i, version: i % 2 == 0 ? 1 : 0)
                    if try store.value(forKey: key(i)) != expected { wrong += 1 }
                }
            }
        }
        line("get and check after reopen", items, d)
        let report = try withStoreErrors { () throws -> StoreVerifier.Report in
            try store.close()
            return try StoreVerifier(directory: directory).verify()
        }

        let stats = reopened
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
