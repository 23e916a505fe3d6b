import Foundation
import Testing
@testable import Cask

@Suite struct DiskStoreRoundTripTests {
    @Test func emptySmallLargeAndIncompressibleValuesRoundTrip() throws {
        let dir = TemporaryDirectory()
        var rng = SeededBytes(seed: 1)
        let values: [String: Data] = [
            "empty": Data(),
            "small": Data("hello".utf8),
            "compressible": rng.compressible(64 << 10),
            "incompressible": rng.random(64 << 10),
            "large": rng.compressible(17 << 20),
            "large-random": rng.random(16 << 20),
        ]
        do {
            let store = try DiskStore(directory: dir.path, options: options())
            for (k, v) in values { try store.setValue(v, forKey: k) }
            for (k, v) in values { #expect(try store.value(forKey: k) == v, "\(k) before reopen") }
            #expect(try store.metadata(forKey: "compressible")?.isCompressed == true)
            #expect(try store.metadata(forKey: "incompressible")?.isCompressed == false)
            try store.close()
        }
        let store = try DiskStore(directory: dir.path, options: options())
        for (k, v) in values { #expect(try store.value(forKey: k) == v, "\(k) after reopen") }
        #expect(store.count == values.count)
    }

    @Test func overwriteKeepsNewestValueAcrossReopen() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try DiskStore(directory: dir.path, options: options(segmentSize: 4096))
            for i in 0..<200 { try store.setValue(Data("v\(i)".utf8), forKey: "k\(i % 7)") }
            for j in 0..<7 {
                let last = (0..<200).last { $0 % 7 == j }!
                #expect(try store.value(forKey: "k\(j)") == Data("v\(last)".utf8))
            }
            try store.close()
        }
        let store = try DiskStore(directory: dir.path, options: options(segmentSize: 4096))
        for j in 0..<7 {
            let last = (0..<200).last { $0 % 7 == j }!
            #expect(try store.value(forKey: "k\(j)") == Data("v\(last)".utf8))
        }
        #expect(store.count == 7)
    }

    @Test func deleteSurvivesReopenWithAndWithoutCleanClose() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try DiskStore(directory: dir.path, options: options(segmentSize: 4096))
            for i in 0..<100 { try store.setValue(Data(repeating: UInt8(i), count: 100), forKey: "key-\(i)") }
            #expect(try store.removeValue(forKey: "key-5"))
            #expect(try store.removeValue(forKey: "key-5") == false)
            #expect(try store.removeValue(forKey: "never-there") == false)
            try store.close()
        }
        do {
            let store = try DiskStore(directory: dir.path, options: options(segmentSize: 4096))
            #expect(try store.value(forKey: "key-5") == nil)
            #expect(try store.value(forKey: "key-6") == Data(repeating: 6, count: 100))
            try store.removeValue(forKey: "key-7")
            try store.sync()
            // No close: the next open scans the last segment.
            _ = store
        }
        let store = try DiskStore(directory: dir.path, options: options(segmentSize: 4096))
        #expect(try store.value(forKey: "key-5") == nil)
        #expect(try store.value(forKey: "key-7") == nil)
        #expect(store.count == 98)
    }

    @Test func expiredItemsAreNeverReturnedAndPinnedItemsIgnoreTTL() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        do {
            let store = try DiskStore(directory: dir.path, options: options(clock: clock.wallClock))
            try store.setValue(Data("a".utf8), forKey: "short", timeToLive: .seconds(10))
            try store.setValue(Data("b".utf8), forKey: "pinned", timeToLive: .seconds(10), isPinned: true)
            try store.setValue(Data("c".utf8), forKey: "forever")
            #expect(try store.metadata(forKey: "short")?.timeToLive(at: Date(milliseconds: clock.milliseconds)) == 10)
            clock.advance(.seconds(9))
            #expect(try store.value(forKey: "short") == Data("a".utf8))
            clock.advance(.seconds(2))
            #expect(try store.value(forKey: "short") == nil)
            #expect(store.contains("short") == false)
            #expect(try store.value(forKey: "pinned") == Data("b".utf8))
            #expect(try store.metadata(forKey: "pinned")?.isPinned == true)
            #expect(store.keys().sorted() == ["forever", "pinned"])
            try store.close()
        }
        let store = try DiskStore(directory: dir.path, options: options(clock: clock.wallClock))
        #expect(try store.value(forKey: "short") == nil)
        #expect(try store.metadata(forKey: "pinned")?.isPinned == true)
        #expect(try store.value(forKey: "forever") == Data("c".utf8))
    }

    @Test func badKeysAndValuesGetTypedErrors() throws {
        let dir = TemporaryDirectory()
        var o = options()
        o.maximumValueSize = 1000
        let store = try DiskStore(directory: dir.path, options: o)
        #expect(throws: CaskError.emptyKey) { try store.setValue(Data("x".utf8), forKey: "") }
        let long = String(repeating: "k", count: 1025)
        #expect(throws: CaskError.keyTooLong(length: 1025, maximum: 1024)) { try store.setValue(Data(), forKey: long) }
        try store.setValue(Data(), forKey: String(repeating: "k", count: 1024))
        #expect(throws: CaskError.valueTooLarge(size: 1001, maximum: 1000)) { try store.setValue(Data(count: 1001), forKey: "big") }
        #expect(try store.value(forKey: "big") == nil)
        try store.setValue(Data(count: 1000), forKey: "big")
        #expect(try store.value(forKey: "big")?.count == 1000)
        #expect(try store.value(forKey: String(repeating: "k", count: 1024)) == Data())
    }

    @Test func reopenAfterManySegmentsUsesHintFiles() throws {
        let dir = TemporaryDirectory()
        var expected: [String: Data] = [:]
        var rng = SeededBytes(seed: 7)
        do {
            let store = try DiskStore(directory: dir.path, options: options(segmentSize: 16 << 10))
            for i in 0..<3000 {
                let key = "key-\(rng.next() % 1000)"
                if i % 10 == 9 {
                    try store.removeValue(forKey: key)
                    expected[key] = nil
                } else {
                    let v = rng.compressible(Int(rng.next() % 300))
                    try store.setValue(v, forKey: key)
                    expected[key] = v
                }
            }
            #expect(store.statistics.segmentCount > 20)
            try store.close()
        }
        do {
            // A clean close leaves the index snapshot: nothing else is read.
            let store = try DiskStore(directory: dir.path, options: options(segmentSize: 16 << 10))
            #expect(store.statistics.indexLoadedFromSnapshot)
            #expect(store.statistics.segmentsScanned == 0 && store.statistics.segmentsLoadedFromHints == 0)
            #expect(store.count == expected.count)
            for (k, v) in expected { #expect(try store.value(forKey: k) == v) }
            try store.close()
        }
        try removeIndexSnapshot(dir.path)
        let store = try DiskStore(directory: dir.path, options: options(segmentSize: 16 << 10))
        let stats = store.statistics
        // Every sealed segment from its hint; the newest one (the snapshot stood for its hint) scanned.
        #expect(stats.segmentsScanned <= 1)
        #expect(stats.segmentsLoadedFromHints > 20)
        #expect(store.count == expected.count)
        for (k, v) in expected { #expect(try store.value(forKey: k) == v) }
    }

    @Test func removeAllEmptiesTheStoreDurably() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try DiskStore(directory: dir.path, options: options(segmentSize: 4096))
            for i in 0..<300 { try store.setValue(Data(count: 50), forKey: "k\(i)") }
            try store.removeAll()
            #expect(store.count == 0)
            #expect(try store.value(forKey: "k1") == nil)
            try store.setValue(Data("new".utf8), forKey: "after")
            try store.sync()
        }
        let store = try DiskStore(directory: dir.path, options: options(segmentSize: 4096))
        #expect(store.keys() == ["after"])
        #expect(store.statistics.segmentCount <= 3)
    }
}

/// Open continues a cleanly closed newest segment (issue 14): an app that opens its store, writes
/// a little and closes it at every launch grows one segment, not a segment and a hint per launch.
/// The active segment's flushed bytes are handed to the device 8 MiB at a time
/// (`startWriteback`, format-spec.md "Writing protocol"), so that a sync waits for less.
@Suite struct WritebackTests {
    @Test func flushedBytesAreWrittenBackInChunksBetweenSyncs() throws {
        let dir = TemporaryDirectory()
        let fs = HookedFileSystem()
        var o = options(segmentSize: 24 << 20)
        o.compression = .never
        o.fileSystem = fs
        let store = try DiskStore(directory: dir.path, options: o)
        let value = Data(repeating: 7, count: 64 << 10)
        for i in 0..<600 {   // about 38 MiB: a rollover, and a sync() halfway through a segment
            try store.setValue(value, forKey: "k\(i)")
            if i == 200 { try store.sync() }
        }
        try store.close()
        let calls = fs.writebacksAndSyncs.withLock { $0 }
        let writebacks = calls.filter { $0.1 >= 0 }
        // The buffer writer thread makes the requests outside the lock: requests it has not
        // made yet merge, and one still waiting at a seal goes with it (the seal syncs those
        // bytes anyway), so under load (CI: one request of 9.4 MB) there are fewer than one
        // per 8 MiB. At least one is made, of at least a chunk, and none overlaps another.
        let requested = writebacks.reduce(Int64(0)) { $0 + $1.2 }
        #expect(requested >= SegmentWriter.writebackChunk, "\(requested) bytes in \(writebacks.count) writebacks for 38 MiB")
        var nextStart: [Int32: Int64] = [:]   // per file: where the next writeback may begin
        for (fd, offset, count) in calls {
            if offset < 0 { continue }
            #expect(count >= SegmentWriter.writebackChunk, "writeback of \(count) bytes")
            #expect(offset >= nextStart[fd, default: 0], "writeback at \(offset) overlaps an earlier one")
            nextStart[fd] = offset + count
        }
        let reopened = try DiskStore(directory: dir.path, options: o)
        #expect(reopened.count == 600)
        #expect(try reopened.value(forKey: "k599") == value)
        try reopened.close()
    }
}

@Suite struct ReopenGrowthTests {
    /// 1,000 cycles here (about 10 s: every close syncs and writes a hint); 10,000 in the long
    /// tier (`CASK_LONG_TESTS=1`, about 100 s).
    @Test func manyOpenPutCloseCyclesLeaveABoundedNumberOfFiles() throws {
        let cycles = longTier ? 10_000 : 1_000
        let dir = TemporaryDirectory()
        var o = StoreOptions()
        o.durability = .none
        o.compaction.isAutomatic = false
        o.logger.logLevel = .critical
        let started = Date()
        for i in 0..<cycles {
            let store = try DiskStore(directory: dir.path, options: o)
            try store.setValue(Data("value \(i)".utf8), forKey: "key-\(i % 500)")
            try store.close()
        }
        let seconds = Date().timeIntervalSince(started)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        print("\(cycles) open-put-close cycles: \(files.count) files (\(files.joined(separator: ", "))) in \(String(format: "%.1f", seconds)) s")
        #expect(files.count <= 3, "\(files)")
        let store = try DiskStore(directory: dir.path, options: o)
        defer { try? store.close() }
        #expect(store.count == 500)
        #expect(store.statistics.segmentsScanned == 0)
        for k in 0..<500 { #expect(try store.value(forKey: "key-\(k)") == Data("value \(cycles - 500 + k)".utf8)) }
    }

    @Test func aSegmentClosedWithATornTailIsNotContinued() throws {
        let dir = TemporaryDirectory()
        var o = StoreOptions()
        o.compaction.isAutomatic = false
        o.logger.logLevel = .critical
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            try store.setValue(Data("a".utf8), forKey: "a")
            try store.close()
        }
        // The hint no longer matches the segment: it is scanned, its tail cut, and not continued.
        let segment = try segmentPaths(dir.path).last!
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: segment))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 13))
        try handle.close()
        let store = try DiskStore(directory: dir.path, options: o)
        try store.setValue(Data("b".utf8), forKey: "b")
        #expect(store.statistics.tornTailBytes == 13)
        #expect(store.segmentInfo().count == 2)
        try store.close()
        let reopened = try DiskStore(directory: dir.path, options: o)
        defer { try? reopened.close() }
        #expect(try reopened.value(forKey: "a") == Data("a".utf8) && (try reopened.value(forKey: "b")) == Data("b".utf8))
    }
}

/// `sync()` writes the buffer under the store's lock and runs the `fdatasync` without it
/// (format-spec.md, "One way to sync without the lock").
@Suite struct SyncOutsideTheLockTests {
    @Test func putsAndReadsGoOnWhileSyncWaitsForTheDevice() throws {
        let dir = TemporaryDirectory()
        let fs = HookedFileSystem()
        var o = options()
        o.durability = .none
        o.fileSystem = fs
        let store = try DiskStore(directory: dir.path, options: o)
        try store.setValue(Data("before".utf8), forKey: "a")
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), synced = DispatchSemaphore(value: 0)
        let armed = Locked(true)
        fs.beforeSync = {
            guard armed.withLock({ let was = $0; $0 = false; return was }) else { return }
            entered.signal()
            release.wait()
        }
        let outcome = Locked<Result<Void, CaskError>?>(nil)
        DispatchQueue.global().async {
            let r = Result { () throws(CaskError) in try store.sync() }
            outcome.withLock { $0 = r }
            synced.signal()
        }
        #expect(entered.wait(timeout: .now() + 60) == .success, "sync() never reached its fdatasync")
        // While the fdatasync waits, a put and a read on another thread finish.
        let worked = DispatchSemaphore(value: 0)
        let read = Locked<Data?>(nil)
        DispatchQueue.global().async {
            try? store.setValue(Data("during".utf8), forKey: "b")
            read.withLock { $0 = try? store.value(forKey: "b") }
            worked.signal()
        }
        let putFinished = worked.wait(timeout: .now() + 10) == .success
        release.signal()
        _ = synced.wait(timeout: .now() + 60)
        if !putFinished { _ = worked.wait(timeout: .now() + 60) }
        #expect(putFinished, "a put waited for sync()'s fdatasync")
        #expect(read.withLock { $0 } == Data("during".utf8))
        #expect(try outcome.withLock { $0 }?.get() != nil)
        #expect(try store.value(forKey: "a") == Data("before".utf8))
        try store.close()
    }
}
