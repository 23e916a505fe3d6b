import Foundation
import Synchronization
import Testing
@testable import Cask

/// An idle store causes no wake-ups (issue 15): the flush thread runs only while records wait
/// for the flush deadline (or an interval sync), the compaction thread only while an item can
/// expire or age out; and a record still reaches the OS within the deadline.
@Suite struct IdleTests {
    func fileBytes(_ dir: TemporaryDirectory) throws -> Int {
        try segmentPaths(dir.path).reduce(0) { $0 + ((try FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) }
    }

    @Test(arguments: [Durability.none, .interval(.milliseconds(50))])
    func anIdleStoreSleepsAndAWriteStillMeetsTheFlushDeadline(durability: Durability) throws {
        let dir = TemporaryDirectory()
        var o = StoreOptions()
        o.durability = durability
        o.flushInterval = .milliseconds(20)
        let store = try DiskStore(directory: dir.path, options: o)
        defer { try? store.close() }
        Thread.sleep(forTimeInterval: 0.3)
        let (flushRuns, compactionRuns) = store.backgroundRuns
        #expect(flushRuns == 0 && compactionRuns == 0, "idle wake-ups: \(flushRuns) flush, \(compactionRuns) compaction")

        let before = try fileBytes(dir)
        try store.setValue(Data(repeating: 7, count: 100), forKey: "k")
        let waited = try secondsUntil(within: 2) { try fileBytes(dir) != before }
        #expect(waited < 0.5, "the record reached the file after \(waited) s")
        #expect(becomesQuiet(within: 10) { store.backgroundRuns.flush }, "the flush thread kept running after the write was flushed")
    }

    @Test func theCompactionThreadRunsWhileItemsCanExpire() throws {
        let dir = TemporaryDirectory()
        var o = StoreOptions()
        o.compaction.checkInterval = .milliseconds(20)
        let store = try DiskStore(directory: dir.path, options: o)
        defer { try? store.close() }
        try store.setValue(Data([1]), forKey: "plain")
        Thread.sleep(forTimeInterval: 0.2)
        #expect(store.backgroundRuns.compaction == 0)
        try store.setValue(Data([2]), forKey: "soon", timeToLive: .milliseconds(30))
        // Sweeps for expired items run at most once a second; the thread runs at nice 10, so a
        // loaded machine may delay it further: the test asserts that it happens, not how fast.
        let waited = secondsUntil(within: 20) { store.statistics.expirations == 1 }
        #expect(store.backgroundRuns.compaction > 0)
        #expect(store.statistics.expirations == 1, "the expired item was not swept in the background after \(waited) s")
    }

    /// Dead bytes in sealed segments (removes, overwrites) arm the compaction thread: deleting
    /// every key shrinks the files without a manual compact(), and then the store sleeps again.
    @Test func removalsInSealedSegmentsArmTheCompactionThread() throws {
        let dir = TemporaryDirectory()
        var o = StoreOptions()
        o.segmentSize = 16 << 10
        o.compaction.checkInterval = .milliseconds(20)
        let store = try DiskStore(directory: dir.path, options: o)
        defer { try? store.close() }
        for i in 0..<2000 { try store.setValue(Data(repeating: UInt8(i & 0xff), count: 100), forKey: "k\(i)") }
        #expect(becomesQuiet(within: 10) { store.backgroundRuns.compaction }, "the compaction thread kept running with nothing to do")
        let peak = store.fileBytes
        for i in 0..<2000 { try store.removeValue(forKey: "k\(i)") }
        let waited = secondsUntil(within: 20) { store.fileBytes <= peak / 10 }
        #expect(store.fileBytes <= peak / 10, "files \(store.fileBytes) bytes of a peak of \(peak) after \(waited) s")
        #expect(becomesQuiet(within: 10) { store.backgroundRuns.compaction }, "the compaction thread kept running")
    }
}
