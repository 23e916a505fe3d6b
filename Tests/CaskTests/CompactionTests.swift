import CaskFormat
import CaskTesting
import Foundation
import Testing
@testable import Cask

/// The compactor's phases (Sources/Cask/Log/Compactor.swift), one test each where a phase has a
/// rule of its own. Compaction is also covered, under other conditions, by:
/// - PowerLossTests.compactionCrashedAfterEachOfItsCallsRecovers: power loss after every file
///   system call of a pass, under every loss model;
/// - KillTests: `kill -9` at each of its crash points (CrashPoint.compaction*);
/// - SyscallOrderTests: the fsync, rename and unlink order of real passes, under strace;
/// - IOErrorTests.faultsAtEveryCallIndexOfAFiveHundredOperationWorkload: a failed call at every
///   index of a workload that compacts;
/// - LimitsTests, CacheModelTests: passes that enforce the byte, count and age limits;
/// - PinTests.compactionKeepsLivePinRecordsOnceAndLeavesThemAlone: pin records;
/// - ConcurrencyTests: passes running beside readers and writers.
@Suite struct CompactionTests {
    /// Options for a store whose passes run only when asked, on small segments.
    func options(_ fs: any CaskFileSystem = POSIXFileSystem(), clock: ManualClock? = nil) -> StoreOptions {
        var o = simulatedOptions(fs, durability: .none)
        if let clock { o.clock = clock.wallClock }
        return o
    }

    /// Tombstones that still hide older records must be kept by a pass; the segment that keeps
    /// them is not garbage, and no later pass rewrites it for nothing (before, a store at its
    /// limit rewrote such a segment 8,742 times in one benchmark run, reclaiming nothing).
    @Test func aSegmentOfTombstonesThatMustStayIsNotRewrittenAgain() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: options())
        let value = Data(count: 100)
        func active() -> UInt32 { store.segmentInfo().first { $0.isActive }!.id }
        // Writes values of `prefix` until a new segment starts; returns how many.
        func fillSegment(_ prefix: String) throws -> Int {
            let start = active()
            var i = 0
            while active() == start { try store.setValue(value, forKey: "\(prefix)-\(i)"); i += 1 }
            return i
        }
        for i in 0..<5 { try store.setValue(value, forKey: "gone-\(i)") }
        _ = try fillSegment("keep")                   // the removed keys' records stay here, mostly live
        for i in 0..<5 { try store.removeValue(forKey: "gone-\(i)") }   // tombstones first in a new segment
        let fillers = try fillSegment("filler")
        for i in 0..<fillers { try store.setValue(value, forKey: "filler-\(i)") }   // the rest of that segment dies
        let first = try store.compactIfNeeded()
        #expect(first.segmentsCompacted == 1 && first.tombstonesDropped == 0)
        let passes = store.statistics.compactions
        for _ in 0..<3 { #expect(try store.compactIfNeeded().segmentsCompacted == 0) }
        #expect(store.statistics.compactions == passes)
        for i in 0..<5 { #expect(try store.value(forKey: "gone-\(i)") == nil) }
        try store.close()
    }

    @Test(arguments: [false, true])
    func compactionKeepsEveryLiveValueAndNoDeletedKey(simulated: Bool) throws {
        let dir = TemporaryDirectory()
        let fs: any CaskFileSystem = simulated ? SimulatedFileSystem() : POSIXFileSystem()
        let path = simulated ? "/store" : dir.path
        let oracle = CrashOracle()
        let store = try DiskStore(directory: path, options: simulatedOptions(fs, durability: .everyWrite))
        runWorkload(store, oracle: oracle, seed: 5, operations: 1500, syncEvery: 1, everyWrite: true, compactEvery: 97)
        #expect(try oracle.violations(in: store) == [])
        let segmentsBefore = store.segmentInfo().count
        let report = try store.compact()
        #expect(try oracle.violations(in: store) == [])
        #expect(report.segmentsCompacted > 0 && store.segmentInfo().count < segmentsBefore)
        try store.close()
        let reopened = try DiskStore(directory: path, options: simulatedOptions(fs, durability: .none))
        #expect(try oracle.violations(in: reopened) == [])
        let indexPointsAtLiveFiles = reopened.state.withLock { s in s.index.entries.allSatisfy { s.segments[$0.segment] != nil } }
        #expect(indexPointsAtLiveFiles)
    }

    /// Regression (found with the multi-process soak): inputs are deleted one by one, so a crash
    /// can keep any prefix of the deletions. Here a compacted segment holds a removed key's old
    /// value and a lower-id log segment its tombstone; the pass drops both. The directory is
    /// copied before each segment unlink (what a crash there leaves, each unlink being durable
    /// before the next): every copy must open without the key.
    @Test func aCrashBetweenInputDeletionsNeverBringsBackARemovedKey() throws {
        let dir = TemporaryDirectory()
        let fs = HookedFileSystem()
        let store = dir.file("store")
        let writer = try DiskStore(directory: store, options: removedVictimOptions(fs))
        try prepareRemovedVictim(writer)
        let images = Locked<[String]>([])
        fs.beforeRemove = { path in
            guard path.hasSuffix(".cask") else { return }
            let image = dir.file("crash\(images.withLock { $0.count })")
            try? copyStore(store, to: image)
            try? FileManager.default.removeItem(atPath: image + "/LOCK")
            images.withLock { $0.append(image) }
        }
        let report = try writer.compact()
        fs.beforeRemove = { _ in }
        try writer.close()
        #expect(report.tombstonesDropped >= 1 && images.withLock { $0 }.count >= 2)
        for image in images.withLock({ $0 }) {
            let reopened = try DiskStore(directory: image, options: removedVictimOptions(POSIXFileSystem()))
            #expect(try reopened.value(forKey: "victim") == nil, "\(image)")
            try reopened.close()
        }
    }

    /// Phase 2: a tombstone goes once no older record of its key can remain; values that were
    /// overwritten go; exactly the live records of segments with garbage are copied. (One pass
    /// over every sealed segment: the reopen seals the last one, and the pass may take them all.)
    /// A lone small segment (a pass's output, say) with a little garbage is not rewritten by
    /// itself: each rewrite would make another small segment and copy it all again.
    @Test func aLoneSmallSegmentWithLittleGarbageIsLeftAlone() throws {
        let dir = TemporaryDirectory()
        var o = options()
        o.segmentSize = 8192
        let store = try DiskStore(directory: dir.path, options: o)
        for i in 0..<60 { try store.setValue(Data(repeating: UInt8(i), count: 100), forKey: "k\(i)") }   // more than one segment
        for i in 10..<60 { try store.removeValue(forKey: "k\(i)") }
        for i in 0..<80 {   // seals the removals' segment, leaving nothing of its own live
            try store.setValue(Data(repeating: 9, count: 100), forKey: "new\(i)")
            try store.removeValue(forKey: "new\(i)")
        }
        _ = try store.compact()
        let small = store.segmentInfo().filter { !$0.isActive && $0.fileBytes < 8192 / 4 }
        #expect(small.count == 1, "\(store.segmentInfo().map { ($0.id, $0.fileBytes, $0.liveBytes, $0.isActive) })")
        try store.setValue(Data(repeating: 7, count: 100), forKey: "k0")   // a little garbage in the output
        let report = try store.compactIfNeeded()
        #expect(report.segmentsCompacted == 0, "\(store.segmentInfo())")
        try store.close()
    }

    @Test func aPassCopiesExactlyTheLiveRecordsAndDropsTombstonesThatHideNothing() throws {
        let dir = TemporaryDirectory()
        var o = options()
        o.compaction.maximumPassBytes = 1 << 20
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            for i in 0..<200 { try store.setValue(Data(repeating: UInt8(i), count: 100), forKey: "k\(i)") }
            for i in stride(from: 0, to: 200, by: 2) { try store.removeValue(forKey: "k\(i)") }
            for i in stride(from: 1, to: 200, by: 4) { try store.setValue(Data(repeating: 9, count: 100), forKey: "k\(i)") }
            try store.close()
        }
        let store = try DiskStore(directory: dir.path, options: o)
        // Live records in the sealed segments that hold garbage: the ones the pass must copy
        // (segments of live records only are left alone).
        let expectedCopies = store.state.withLock { s in
            s.usage.filter { $0.key != s.writer.id && $0.value.fileBytes - Int64(Format.segmentHeaderSize) > $0.value.liveBytes }
                .reduce(0) { $0 + $1.value.liveCount }
        }
        #expect(expectedCopies > 0)
        let report = try store.compact()
        #expect(report.recordsCopied == expectedCopies)
        #expect(report.tombstonesDropped == 100)
        #expect(store.count == 100 && store.statistics.deadBytes == 0)
        try store.close()
        let reopened = try DiskStore(directory: dir.path, options: o)
        defer { try? reopened.close() }
        #expect(reopened.count == 100)
        for i in 0..<200 {
            let expected: Data? = i % 2 == 0 ? nil : i % 4 == 1 ? Data(repeating: 9, count: 100) : Data(repeating: UInt8(i), count: 100)
            #expect(try reopened.value(forKey: "k\(i)") == expected)
        }
    }

    /// Phase 2: a tombstone that may still hide a record in a segment the pass leaves alone is
    /// kept, so that the old value cannot come back after a reopen.
    @Test func aTombstoneHidingARecordInAnUncompactedSegmentIsKept() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: options())
        try store.setValue(Data(repeating: 1, count: 3000), forKey: "old")
        let valueSegment = try #require(recordLocations(store)["old"]).0
        for i in 0..<40 { try store.setValue(Data(repeating: 2, count: 100), forKey: "fill\(i)") }
        try store.removeValue(forKey: "old")
        let tombstoneSegment = store.state.withLock { $0.writer.id }
        var i = 0
        while store.state.withLock({ $0.writer.id }) == tombstoneSegment {
            try store.setValue(Data(repeating: 3, count: 100), forKey: "more\(i)")
            i += 1
        }
        #expect(valueSegment != tombstoneSegment)
        // One pass over the tombstone's segment only: the value's segment stays.
        let plan = store.state.withLock { s -> Compactor.Plan in
            let remaining = s.usage.filter { $0.key != tombstoneSegment }.map(\.value.minimumSequence).min() ?? .max
            let id = s.tail.takeSegmentID()
            return Compactor.Plan(ids: [tombstoneSegment], remainingMinimumSequence: remaining, remainingMinimumSequenceWithDeadBytes: remaining, outputID: id)
        }
        let report = try Compactor(state: store.state, directory: dir.path, options: store.options).run(plan)
        #expect(report.segmentsCompacted == 1 && report.tombstonesDropped == 0)
        try store.close()
        let reopened = try DiskStore(directory: dir.path, options: options())
        defer { try? reopened.close() }
        #expect(try reopened.value(forKey: "old") == nil)
        #expect(reopened.segmentInfo().contains { $0.id == valueSegment })
    }

    /// Phase 3: the output is written through a SegmentWriter with its hint file, carrying the
    /// access times the index held (a reopen loads it from the hint, and LRU order survives).
    @Test func theOutputHasAValidHintWithTheIndexAccessTimes() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let store = try DiskStore(directory: dir.path, options: options(clock: clock))
        for i in 0..<120 { try store.setValue(Data(repeating: UInt8(i), count: 100), forKey: "k\(i)") }
        for i in stride(from: 0, to: 120, by: 2) { try store.removeValue(forKey: "k\(i)") }   // garbage everywhere
        clock.advance(.seconds(30))
        _ = try store.value(forKey: "k101")
        let readAt = clock.milliseconds
        #expect(try store.compact().segmentsCompacted > 0)
        try store.close()
        #expect(try StoreVerifier(directory: dir.path).verify().isClean)
        let reopened = try DiskStore(directory: dir.path, options: options(clock: clock))
        defer { try? reopened.close() }
        #expect(reopened.statistics.segmentsScanned == 0)
        let access = try reopened.metadata(forKey: "k101")?.accessDate.timeIntervalSince1970
        #expect(access.map { Int64(($0 * 1000).rounded()) } == readAt)
    }

    /// Phase 3 failure: a pass whose output cannot be renamed into place leaves no trace (no
    /// temporary file, no hint) and changes nothing readable.
    @Test func aFailedOutputIsRemovedAndTheInputsStay() throws {
        let dir = TemporaryDirectory()
        let faulty = FaultyFileSystem(wrapping: POSIXFileSystem())
        let store = try DiskStore(directory: dir.path, options: options(faulty))
        for i in 0..<120 { try store.setValue(Data(repeating: UInt8(i), count: 100), forKey: "k\(i)") }
        for i in 0..<60 { try store.removeValue(forKey: "k\(i)") }
        // compact() seals an active segment holding dead records before its passes: done here,
        // so that what the failed pass leaves is all that changes below.
        try store.sealActiveSegment()
        store.waitForBackgroundWork()
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        faulty.inject(.init(operation: .rename, at: 2, errno: EIO))   // the first rename is the hint's
        #expect(throws: CaskError.self) { try store.compact() }
        #expect(faulty.faultsInjected == 1)
        faulty.clear()
        let after = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(!after.contains { $0.hasSuffix(".tmp") })
        #expect(Set(after).subtracting(files).isEmpty, "new files: \(Set(after).subtracting(files))")
        for i in 60..<120 { #expect(try store.value(forKey: "k\(i)") == Data(repeating: UInt8(i), count: 100)) }
        try store.close()
    }

    /// A pass lists every record of its inputs in 24 bytes each, and gets back what it listed:
    /// the input (up to the last allowed), kind, offset, size, and the access time (clamped as
    /// the index clamps it).
    @Test func listedRecordsTakeTwentyFourBytesAndKeepTheirFields() {
        #expect(MemoryLayout<Compactor.Kept>.stride == 24)
        for (input, time) in [(0, Int64(0)), (Compactor.maximumInputs - 1, IndexEntry.maximumTime), (17, 1_800_000_000_123)] {
            for kind in 0..<3 {
                var r = Compactor.Kept(sequence: .max - 1, accessTime: time, input: input, offset: Int(UInt32.max), size: 1 << 30 + 1100,
                                       isTombstone: kind == 0, isPin: kind == 1, isRemoval: kind == 2)
                #expect(r.sequence == .max - 1 && r.input == input && r.offset == Int(UInt32.max) && r.size == 1 << 30 + 1100)
                #expect(r.accessTime == time && r.isTombstone == (kind == 0) && r.isPin == (kind == 1) && r.isRemoval == (kind == 2))
                r.accessTime = -5
                #expect(r.accessTime == 0 && r.input == input && r.isPin == (kind == 1))
                r.accessTime = .max
                #expect(r.accessTime == IndexEntry.maximumTime && r.input == input && r.isRemoval == (kind == 2))
            }
        }
    }
}
