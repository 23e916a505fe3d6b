import Foundation
import Testing
@testable import Cask

/// Damage never costs more than it must (issue 14): when a sealed segment with an intact hint
/// file is cut short, the hint says exactly which records were in the lost bytes, and only their
/// keys may go. Each case also runs with the hint deleted, which is the salvage rule's
/// conservative answer (every key older than the damage), and prints both counts.
@Suite struct DamageCostTests {
    struct Outcome { var lost: Int; var wrong: Int }

    /// 20,000 keys of ~100 bytes over about 40 sealed segments, closed cleanly (every segment has
    /// a hint); then segment number 20 loses the bytes from `cut(size)` on; then a reopen.
    func damage(cut: (Int) -> Int, keepHint: Bool) throws -> (Outcome, inRange: Int) {
        let dir = TemporaryDirectory()
        var o = StoreOptions()
        o.segmentSize = 64 << 10
        o.compaction.isAutomatic = false
        o.logger.logLevel = .critical
        var expected: [String: Data] = [:]
        var victim: UInt32 = 0
        var inRange = Set<String>()
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            for i in 0..<20_000 {
                let value = Data("value-\(i)-".utf8) + Data(repeating: UInt8(i & 0xff), count: 90)
                try store.setValue(value, forKey: "key-\(i)")
                expected["key-\(i)"] = value
            }
            // Some keys overwritten later, so that the damaged segment holds old and new records.
            for i in stride(from: 0, to: 20_000, by: 7) {
                let value = Data("newer-\(i)".utf8)
                try store.setValue(value, forKey: "key-\(i)")
                expected["key-\(i)"] = value
            }
            let locations = recordLocations(store)
            victim = try #require(Set(locations.values.map(\.0)).sorted().dropFirst(20).first)
            let size = Int(try #require(store.segmentInfo().first { $0.id == victim }).fileBytes)
            let start = cut(size)
            inRange = Set(locations.filter { $0.value.0 == victim && $0.value.1 + $0.value.2 > start }.map(\.key))
            try store.close()
            let path = dir.file(FileNames.segment(victim))
            try truncateFile(path, to: start)
            if !keepHint { try FileManager.default.removeItem(atPath: dir.file(FileNames.hint(victim))) }
        }
        let reopened = try DiskStore(directory: dir.path, options: o)
        defer { try? reopened.close() }
        var lost = 0, wrong = 0
        for (key, value) in expected {
            switch try reopened.value(forKey: key) {
            case nil: lost += 1
            case let v? where v != value: wrong += 1
            default: break
            }
        }
        return (Outcome(lost: lost, wrong: wrong), inRange.count)
    }

    @Test(arguments: [("last 100 bytes", 100), ("half", -1)])
    func aCutSealedSegmentWithAnIntactHintLosesOnlyTheKeysInTheCut(name: String, amount: Int) throws {
        let cut: (Int) -> Int = { size in amount > 0 ? size - amount : size / 2 }
        let (guided, inRange) = try damage(cut: cut, keepHint: true)
        let (salvage, _) = try damage(cut: cut, keepHint: false)
        print("damage cost, sealed segment cut (\(name)): \(inRange) live records in the cut bytes; keys lost with the hint \(guided.lost), without it (salvage rule) \(salvage.lost)")
        #expect(guided.wrong == 0 && salvage.wrong == 0)
        #expect(inRange > 0)
        #expect(guided.lost == inRange)
        #expect(salvage.lost >= guided.lost)
    }
}
