import CaskTesting
import Foundation
import Testing
@testable import Cask

/// Evictions under limits, most of them without a tombstone (format-spec.md, "Eviction without a
/// tombstone"): whatever a crash, a compaction or a reopen from hint files does, no key comes
/// back with a value older than its last durable one, and no removed key comes back.
@Suite struct EvictionCrashTests {
    func limitedOptions(_ fs: any CaskFileSystem, durability: Durability) -> StoreOptions {
        var o = simulatedOptions(fs, durability: durability, segmentSize: 4096)
        o.limits = StoreLimits(byteLimit: 16 << 10, countLimit: 40)
        return o
    }

    @Test func crashAtARandomCallUnderLimitsNeverBringsBackAnOlderValue() throws {
        let runs = longTier ? 3000 : 300
        let result = try crashAtRandomCalls(runs: runs, seed: { UInt64($0) &* 6007 &+ 5 }, compactEvery: { $0 % 2 == 0 ? 37 : 0 },
                                            evictable: true) { limitedOptions($0, durability: $1) }
        print("eviction crashes: \(runs) runs, \(result.crashStates) crash states, \(result.evictionsWithoutTombstone) evictions without a tombstone, \(result.violations.count) violations")
        #expect(result.evictionsWithoutTombstone > 1000)
        #expect(result.violations.isEmpty, "\(result.violations.prefix(10))")
    }

    /// Every store the workload leaves, reopened from its hint files and segments alone (the
    /// index snapshot removed, as after a crash at close), with passes chosen as the compaction
    /// thread chooses them (so that some segments holding older records stay) and forced ones.
    @Test func reopeningFromHintsAfterEvictionsAndCompactionsNeverBringsBackAnOlderValue() throws {
        var violations: [String] = []
        var withoutTombstone = 0
        for run in 0..<60 {
            let dir = TemporaryDirectory()
            var o = StoreOptions()
            o.segmentSize = 4096
            o.compaction.isAutomatic = false
            o.limits = StoreLimits(byteLimit: 24 << 10, countLimit: 60)
            let oracle = CrashOracle()
            let store = try DiskStore(directory: dir.path, options: o)
            var rng = SeededBytes(seed: UInt64(run) &+ 1000)
            // Keys read often and written once keep old segments live (uncompacted) while the
            // records of the others in them go dead.
            for k in 0..<15 {
                let value = rng.random(100)
                oracle.acknowledge(oracle.begin("key-\(k)", value))
                try store.setValue(value, forKey: "key-\(k)")
            }
            for i in 0..<800 {
                _ = try store.value(forKey: "key-\(rng.next() % 15)")
                let key = "key-\(15 + rng.next() % 65)"
                let value = rng.random(Int(rng.next() % 200))
                let remove = rng.next() % 9 == 0
                let op = oracle.begin(key, remove ? nil : value)
                if remove { try store.removeValue(forKey: key) } else { try store.setValue(value, forKey: key) }
                oracle.acknowledge(op)
                if i % 25 == 0 { _ = try store.compactIfNeeded() }
                if run % 3 == 0 && i % 200 == 199 { try store.compact() }
            }
            try store.sync()
            oracle.markDurable()
            withoutTombstone += store.statistics.evictionsWithoutTombstone
            try store.close()
            try removeIndexSnapshot(dir.path)
            let reopened = try DiskStore(directory: dir.path, options: o)
            violations += try oracle.violations(in: reopened, evictable: true).map { "run \(run): \($0)" }
            try reopened.close()
        }
        #expect(withoutTombstone > 100)
        #expect(violations.isEmpty, "\(violations.prefix(10))")
    }

    /// The rule itself: an evicted key whose older record lies in another segment gets a
    /// tombstone; one whose older records share its segment does not; a trim always writes one.
    @Test func aTombstoneIsWrittenExactlyWhenAnOlderRecordLiesElsewhere() throws {
        func evictOld(olderRecordInAnotherSegment: Bool, trim: Bool) throws -> (withoutTombstone: Int, tombstones: Int) {
            let dir = TemporaryDirectory()
            var o = StoreOptions()
            o.segmentSize = 4096
            o.compaction.isAutomatic = false
            if !trim { o.limits = StoreLimits(countLimit: 50) }
            let store = try DiskStore(directory: dir.path, options: o)
            try store.setValue(Data(repeating: 1, count: 100), forKey: "old")
            if olderRecordInAnotherSegment {
                for i in 0..<40 { try store.setValue(Data(repeating: 2, count: 100), forKey: "seal\(i)") }
                for i in 0..<40 { try store.removeValue(forKey: "seal\(i)") }
            }
            try store.setValue(Data(repeating: 3, count: 100), forKey: "old")   // "old" is now least recently used
            let before = store.statistics.writes
            for i in 0..<50 { try store.setValue(Data(repeating: 4, count: 100), forKey: "k\(i)") }
            if trim { try store.trim(toCount: 50) }
            #expect(try store.value(forKey: "old") == nil)
            let s = store.statistics
            try store.close()
            // Each put wrote one record; every other record since is a tombstone.
            return (s.evictionsWithoutTombstone, s.writes - before - 50)
        }
        let shared = try evictOld(olderRecordInAnotherSegment: false, trim: false)
        #expect(shared.withoutTombstone == 1 && shared.tombstones == 0)
        let elsewhere = try evictOld(olderRecordInAnotherSegment: true, trim: false)
        #expect(elsewhere.withoutTombstone == 0 && elsewhere.tombstones == 1)
        let trimmed = try evictOld(olderRecordInAnotherSegment: false, trim: true)
        #expect(trimmed.withoutTombstone == 0 && trimmed.tombstones == 1)
    }
}
