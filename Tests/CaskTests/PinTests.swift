import CaskTesting
import Foundation
import Testing
@testable import Cask
import CaskFormat

/// `setPinned` changes the pin and nothing else: not the access time (LRU), not the write time,
/// not the expiry; it writes a small pin record, not the value; and the pin survives reopen (from
/// hints and by scanning), crashes and compaction until the value is overwritten.
@Suite struct PinTests {
    func pinnedOptions(_ clock: ManualClock, segmentSize: Int = 64 << 20) -> StoreOptions {
        options(segmentSize: segmentSize, clock: clock.wallClock)
    }

    func hintFiles(_ dir: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".hint") }
    }

    @Test func pinningIsNotAnAccessAndKeepsLRUOrder() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        var o = pinnedOptions(clock)
        o.limits.countLimit = 3
        let store = try DiskStore(directory: dir.path, options: o)
        try store.setValue(Data("old".utf8), forKey: "old")
        let written = try #require(try store.metadata(forKey: "old"))
        clock.advance(.seconds(10))
        try store.setValue(Data("b".utf8), forKey: "b")
        clock.advance(.seconds(10))
        try store.setValue(Data("c".utf8), forKey: "c")
        clock.advance(.seconds(10))

        #expect(try store.setPinned(true, forKey: "old"))
        let pinned = try #require(try store.metadata(forKey: "old"))
        #expect(pinned.isPinned)
        #expect(pinned.accessDate == written.accessDate)
        #expect(pinned.writeDate == written.writeDate)
        clock.advance(.seconds(10))
        #expect(try store.setPinned(false, forKey: "old"))
        let unpinned = try #require(try store.metadata(forKey: "old"))
        #expect(!unpinned.isPinned)
        #expect(unpinned.accessDate == written.accessDate)
        #expect(unpinned.writeDate == written.writeDate)

        // The least recently used item is still "old": it goes first.
        clock.advance(.seconds(10))
        try store.setValue(Data("d".utf8), forKey: "d")
        #expect(!store.contains("old"))
        #expect(store.contains("b") && store.contains("c") && store.contains("d"))
        try store.close()
    }

    @Test func pinningALargeValueWritesOnlyAPinRecord() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let store = try DiskStore(directory: dir.path, options: pinnedOptions(clock))
        var rng = SeededBytes(seed: 3)
        let value = rng.random(1 << 20)
        try store.setValue(value, forKey: "big")
        let before = store.statistics.bytesWritten
        #expect(try store.setPinned(true, forKey: "big"))
        let afterPin = store.statistics.bytesWritten
        #expect(afterPin - before < 200)
        #expect(afterPin - before == Int64(Format.recordHeaderSize + 3))
        // Already pinned: nothing is written.
        #expect(try store.setPinned(true, forKey: "big"))
        #expect(store.statistics.bytesWritten == afterPin)
        #expect(try store.setPinned(false, forKey: "big"))
        #expect(store.statistics.bytesWritten - afterPin < 200)
        // Absent: false, nothing written.
        let beforeMissing = store.statistics.bytesWritten
        #expect(try !store.setPinned(true, forKey: "missing"))
        #expect(store.statistics.bytesWritten == beforeMissing)
        #expect(try store.value(forKey: "big") == value)
        try store.close()
    }

    @Test func unpinningAnItemWhoseTTLRanOutRemovesItAtOnce() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let store = try DiskStore(directory: dir.path, options: pinnedOptions(clock))
        try store.setValue(Data("v".utf8), forKey: "k", timeToLive: .seconds(5), isPinned: true)
        let expiry = try #require(try store.metadata(forKey: "k")?.expirationDate)
        clock.advance(.seconds(60))
        #expect(store.contains("k"))   // pinned: the TTL does not apply
        #expect(try store.metadata(forKey: "k")?.expirationDate == expiry)
        #expect(try store.setPinned(false, forKey: "k"))
        #expect(try store.value(forKey: "k") == nil)
        #expect(!store.contains("k"))
        // Not there any more: pinning it again finds nothing.
        #expect(try !store.setPinned(true, forKey: "k"))
        try store.close()
    }

    @Test func unpinningAnItemIdlePastTheAgeLimitRemovesItAtOnce() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        var o = pinnedOptions(clock)
        o.limits.ageLimit = .seconds(60)
        let store = try DiskStore(directory: dir.path, options: o)
        try store.setValue(Data("v".utf8), forKey: "k", isPinned: true)
        try store.setValue(Data("w".utf8), forKey: "other")
        clock.advance(.seconds(600))
        #expect(store.contains("k"))
        #expect(!store.contains("other"))
        #expect(try store.setPinned(false, forKey: "k"))
        #expect(try store.value(forKey: "k") == nil)
        #expect(!store.contains("k"))
        // An aged-out unpinned item cannot be pinned back to life.
        #expect(try !store.setPinned(true, forKey: "other"))
        #expect(try store.value(forKey: "other") == nil)
        try store.close()
    }

    /// The pin (and only the pin) survives a clean reopen (hints), a reopen by scanning
    /// (hints deleted), and compaction; an overwrite without `isPinned` ends it for good.
    @Test func pinSurvivesReopenScanAndCompactionUntilOverwritten() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let o = pinnedOptions(clock, segmentSize: 4096)
        var written: [String: ItemMetadata] = [:]
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            for i in 0..<40 {
                try store.setValue(Data(repeating: UInt8(i), count: 200), forKey: "k\(i)", timeToLive: .seconds(3600))
                written["k\(i)"] = try store.metadata(forKey: "k\(i)")
            }
            clock.advance(.seconds(30))
            for i in stride(from: 0, to: 40, by: 3) { #expect(try store.setPinned(true, forKey: "k\(i)")) }
            // Garbage in the early segments, so that compaction rewrites them.
            for i in stride(from: 1, to: 40, by: 3) { try store.removeValue(forKey: "k\(i)") }
            try store.close()
        }
        func check(_ store: DiskStore, _ label: String) throws {
            for i in 0..<40 where i % 3 != 1 {
                let m = try #require(try store.metadata(forKey: "k\(i)"), "\(label): k\(i)")
                #expect(m.isPinned == (i % 3 == 0), "\(label): k\(i)")
                #expect(m.writeDate == written["k\(i)"]!.writeDate, "\(label): k\(i)")
                #expect(m.expirationDate == written["k\(i)"]!.expirationDate, "\(label): k\(i)")
            }
            for i in stride(from: 1, to: 40, by: 3) { #expect(!store.contains("k\(i)"), "\(label): k\(i)") }
        }
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            #expect(store.statistics.indexLoadedFromSnapshot)
            try check(store, "from the index snapshot")
            try store.close()
        }
        try removeIndexSnapshot(dir.path)
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            #expect(store.statistics.segmentsLoadedFromHints > 0)
            try check(store, "from hints")
            try store.close()
        }
        for hint in try hintFiles(dir) { try FileManager.default.removeItem(atPath: dir.file(hint)) }
        try removeIndexSnapshot(dir.path)
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            #expect(store.statistics.segmentsScanned > 0 && store.statistics.segmentsLoadedFromHints == 0)
            try check(store, "scanned")
            let report = try store.compact()
            #expect(report.segmentsCompacted > 0)
            try check(store, "compacted")
            try store.close()
        }
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            try check(store, "reopened after compaction")
            // An overwrite without isPinned: the old pin record no longer applies.
            try store.setValue(Data("new".utf8), forKey: "k0")
            #expect(try store.metadata(forKey: "k0")?.isPinned == false)
            try store.close()
        }
        for hint in try hintFiles(dir) { try FileManager.default.removeItem(atPath: dir.file(hint)) }
        for pass in ["from hints", "scanned"] {
            let store = try DiskStore(directory: dir.path, options: o)
            #expect(try store.metadata(forKey: "k0")?.isPinned == false, "\(pass)")
            #expect(try store.metadata(forKey: "k3")?.isPinned == true, "\(pass)")
            #expect(try store.value(forKey: "k0") == Data("new".utf8))
            try store.compact()
            #expect(try store.metadata(forKey: "k0")?.isPinned == false, "\(pass) compacted")
            try store.close()
        }
    }

    /// Live pin records are live bytes: a segment of them is not garbage, and compaction does not
    /// rewrite it again and again.
    @Test func compactionKeepsLivePinRecordsOnceAndLeavesThemAlone() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let o = pinnedOptions(clock, segmentSize: 4096)
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            for i in 0..<20 { try store.setValue(Data(repeating: UInt8(i), count: 300), forKey: "k\(i)") }
            for i in 0..<20 { try store.setPinned(true, forKey: "k\(i)") }
            try store.close()
        }
        let store = try DiskStore(directory: dir.path, options: o)
        #expect(store.statistics.deadBytes == 0)
        try store.compact()
        #expect(store.statistics.deadBytes == 0)
        #expect(try store.compact().segmentsCompacted == 0)
        for i in 0..<20 { #expect(try store.metadata(forKey: "k\(i)")?.isPinned == true) }
        let pinRecordsLive = store.state.withLock { $0.keys.pinRecords.count }
        #expect(pinRecordsLive == 20)
        try store.close()
        let reopened = try DiskStore(directory: dir.path, options: o)
        for i in 0..<20 { #expect(try reopened.metadata(forKey: "k\(i)")?.isPinned == true) }
        #expect(reopened.statistics.deadBytes == 0)
        try reopened.close()
    }

    @Test func livePinRecordsCountAsLiveBytesUntilTheirValueIsReplaced() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let store = try DiskStore(directory: dir.path, options: pinnedOptions(clock))
        try store.setValue(Data(repeating: 1, count: 100), forKey: "key")
        let valueBytes = store.liveBytes
        let pinRecord = Format.recordHeaderSize + 3
        try store.setPinned(true, forKey: "key")
        #expect(store.liveBytes == valueBytes + pinRecord)
        try store.setPinned(false, forKey: "key")   // replaces the first pin record
        #expect(store.liveBytes == valueBytes + pinRecord)
        try store.setValue(Data(repeating: 2, count: 100), forKey: "key")
        #expect(store.liveBytes == valueBytes)
        try store.setPinned(true, forKey: "key")
        try store.removeValue(forKey: "key")
        #expect(store.liveBytes == 0)
        try store.setValue(Data(repeating: 3, count: 100), forKey: "key")
        try store.setPinned(true, forKey: "key")
        try store.removeAll(pinned: true)
        #expect(store.liveBytes == 0 && store.count == 0)
        try store.close()
    }

    /// In `.everyWrite` mode a pin is durable when `setPinned` returns; in the other modes an
    /// unsynced pin lost in a crash simply reverts, and never damages anything.
    @Test(arguments: [Durability.everyWrite, .none])
    func pinAfterPowerLoss(durability: Durability) throws {
        for model in SimulatedFileSystem.CrashModel.allCases {
            let fs = SimulatedFileSystem()
            let store = try DiskStore(directory: "/s", options: simulatedOptions(fs, durability: durability, segmentSize: 1 << 20))
            try store.setValue(Data("a".utf8), forKey: "a")
            try store.setValue(Data("b".utf8), forKey: "b", isPinned: true)
            try store.sync()
            #expect(try store.setPinned(true, forKey: "a"))
            #expect(try store.setPinned(false, forKey: "b"))
            // No close: the active segment has no hint, so the reopen scans it.
            let rebooted = fs.reboot(model, seed: 7)
            let reopened = try DiskStore(directory: "/s", options: simulatedOptions(rebooted, durability: .none))
            #expect(reopened.statistics.segmentsScanned > 0)
            #expect(try reopened.value(forKey: "a") == Data("a".utf8), "\(model)")
            #expect(try reopened.value(forKey: "b") == Data("b".utf8), "\(model)")
            if durability == .everyWrite {
                #expect(try reopened.metadata(forKey: "a")?.isPinned == true, "\(model)")
                #expect(try reopened.metadata(forKey: "b")?.isPinned == false, "\(model)")
            }
            try reopened.close()
        }
    }

    /// A store written in format version 1 (before pin records) opens and reads; what is written
    /// to it afterwards is the current version.
    @Test func versionOneStoreOpensAndReads() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let o = pinnedOptions(clock, segmentSize: 4096)
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            for i in 0..<30 { try store.setValue(Data(repeating: UInt8(i), count: 300), forKey: "k\(i)", isPinned: i == 4) }
            try store.close()
        }
        try removeIndexSnapshot(dir.path)   // a version-1 writer never wrote one
        // Rewrite every file as a version-1 writer wrote it (headers, and hint entries of 52 bytes).
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".cask") || $0.hasSuffix(".hint") }
        #expect(names.contains { $0.hasSuffix(".hint") })
        for name in names {
            #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file(name)))[8] == UInt8(Format.version), "\(name)")
            try rewriteAsOlderVersion(1, path: dir.file(name))
        }
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            // Sealed segments from their hints; the newest (its hint was the snapshot) scanned.
            #expect(store.statistics.segmentsLoadedFromHints > 0 && store.statistics.segmentsScanned <= 1)
            #expect(store.statistics.damagedRanges == 0 && store.statistics.keysDroppedByRecovery == 0)
            for i in 0..<30 { #expect(try store.value(forKey: "k\(i)") == Data(repeating: UInt8(i), count: 300)) }
            #expect(try store.metadata(forKey: "k4")?.isPinned == true)
            #expect(try store.setPinned(true, forKey: "k7"))
            try store.close()
        }
        let active = try segmentPaths(dir.path).last!
        let header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: active)))
        #expect(header.withUnsafeBytes { $0.u32(8) } == Format.version)
        #expect(Format.version == 6)
        let store = try DiskStore(directory: dir.path, options: o)
        #expect(try store.metadata(forKey: "k7")?.isPinned == true)
        #expect(try store.value(forKey: "k7") == Data(repeating: 7, count: 300))
        try store.close()
    }

    /// The verifier and `cask dump` accept pin records.
    @Test func verifierAndDumpAcceptPinRecords() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        do {
            let store = try DiskStore(directory: dir.path, options: pinnedOptions(clock))
            try store.setValue(Data("v".utf8), forKey: "key")
            try store.setPinned(true, forKey: "key")
            try store.close()
        }
        let report = try StoreVerifier(directory: dir.path).verify()
        #expect(report.isClean && report.records == 2)
        let id = UInt32(try segmentPaths(dir.path).last!.split(separator: "/").last!.prefix(10))!
        let dump = try SegmentDump.read(directory: dir.path, segment: id)
        #expect(dump.records.map(\.kind) == ["value", "pin"])
        #expect(dump.records[1].pinned && dump.records[1].pinTarget == dump.records[0].sequence && dump.records[1].expiryTime == nil)
    }
}
