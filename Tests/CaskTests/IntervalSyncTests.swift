import CaskTesting
import Foundation
import Testing
@testable import Cask

/// `.interval(d)` syncs at most once per `d` (plus rollover and close), and still makes every
/// write durable within `d` (issue 26). Syncs are counted by the file system itself
/// (`FaultyFileSystem` without faults counts every call).
@Suite struct IntervalSyncTests {
    func store(_ dir: TemporaryDirectory, _ fs: FaultyFileSystem, interval: Duration) throws -> DiskStore {
        var o = options(durability: .interval(interval))
        o.fileSystem = fs
        return try DiskStore(directory: dir.path, options: o)
    }

    /// Puts every `every` for `span`; returns the `fdatasync`s of segment files meanwhile.
    func syncsWhilePutting(_ store: DiskStore, _ fs: FaultyFileSystem, every: TimeInterval, for span: TimeInterval) throws -> Int {
        let before = fs.calls(.sync)
        let start = Date()
        var i = 0
        while Date().timeIntervalSince(start) < span {
            try store.setValue(Data(repeating: UInt8(i & 0xff), count: 200), forKey: "k\(i % 50)")
            i += 1
            Thread.sleep(forTimeInterval: every)
        }
        return fs.calls(.sync) - before
    }

    @Test func syncsAtMostOncePerInterval() throws {
        let dir = TemporaryDirectory()
        let fs = FaultyFileSystem(wrapping: POSIXFileSystem())
        let s = try store(dir, fs, interval: .milliseconds(300))
        let syncs = try syncsWhilePutting(s, fs, every: 0.01, for: 1.5)
        print("interval 300 ms, a put every 10 ms for 1.5 s: \(syncs) syncs")
        // 1.5 s / 300 ms = 5; one more for a run that starts as the loop ends. Before the fix
        // the flush thread synced on every 20 ms tick (about 75).
        #expect(syncs <= 6)
        #expect(syncs >= 2, "the interval syncs ran")
        let beforeClose = fs.calls(.sync)
        try s.close()
        #expect(fs.calls(.sync) > beforeClose, "close syncs what the interval left")
    }

    @Test func aLongIntervalSyncsNothingBeforeItIsDue() throws {
        let dir = TemporaryDirectory()
        let fs = FaultyFileSystem(wrapping: POSIXFileSystem())
        let s = try store(dir, fs, interval: .seconds(10))
        let syncs = try syncsWhilePutting(s, fs, every: 0.02, for: 1)
        #expect(syncs == 0, "\(syncs) syncs in 1 s with a 10 s interval")
        #expect(s.statistics.segmentSyncs == 0)
        let beforeClose = fs.calls(.sync)
        try s.close()
        #expect(fs.calls(.sync) == beforeClose + 1, "close syncs once")
    }

    /// A write after an idle spell is synced one interval later (not at the next flush tick,
    /// and not only at close), and then the store is quiet again.
    @Test func aWriteIsDurableWithinTheInterval() throws {
        let dir = TemporaryDirectory()
        let fs = FaultyFileSystem(wrapping: POSIXFileSystem())
        let s = try store(dir, fs, interval: .milliseconds(200))
        defer { try? s.close() }
        Thread.sleep(forTimeInterval: 0.1)
        let before = fs.calls(.sync)
        let start = Date()
        try s.setValue(Data("durable".utf8), forKey: "k")
        var synced: TimeInterval?
        while synced == nil && Date().timeIntervalSince(start) < 5 {
            if fs.calls(.sync) > before { synced = Date().timeIntervalSince(start) }
            Thread.sleep(forTimeInterval: 0.005)
        }
        let after = try #require(synced, "the write was never synced")
        #expect(after >= 0.18, "synced after \(after) s: before the interval was up")
        // The sync call is counted as it starts; the store marks the bytes synced once it returns.
        let markedBy = Date().addingTimeInterval(5)
        while !s.state.withLock({ $0.writer.syncedSize == $0.writer.size }) && Date() < markedBy { Thread.sleep(forTimeInterval: 0.005) }
        #expect(s.state.withLock { $0.writer.syncedSize == $0.writer.size }, "everything written is synced")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(fs.calls(.sync) == before + 1, "nothing more to sync, yet it synced again")
    }
}
