import Foundation
import Testing
@testable import Cask

/// Compaction reclaims the active segment's garbage too (issue 26): `compact()` seals it first,
/// and the compaction thread seals it once the store is idle and it is mostly dead, so a store
/// smaller than one segment shrinks, and one whose every key was removed shrinks to a few KiB.
@Suite struct ActiveSegmentCompactionTests {
    /// 60 keys of 8 KiB values, each written 4 times (the store): about 1.9 MiB of
    /// records, a quarter of them live, all in the active segment of a 64 MiB segment size.
    func fill(_ s: DiskStore, round: Int = 0) throws -> [String: Data] {
        var rng = SeededBytes(seed: 26 + UInt64(round))
        var latest: [String: Data] = [:]
        for _ in 0..<4 {
            for k in 0..<60 {
                let value = rng.random(8 << 10)
                try s.setValue(value, forKey: "key-\(k)")
                latest["key-\(k)"] = value
            }
        }
        return latest
    }

    /// Bytes of segment and hint files in the folder, as `du` would count them.
    func bytesOnDisk(_ dir: TemporaryDirectory) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix(".cask") || $0.hasSuffix(".hint") || $0.hasSuffix(".tmp") }
            .reduce(0) { $0 + ((try FileManager.default.attributesOfItem(atPath: dir.file($1))[.size] as? Int) ?? 0) }
    }

    @Test func compactReclaimsTheGarbageOfTheActiveSegment() throws {
        let dir = TemporaryDirectory()
        var latest: [String: Data] = [:]
        do {
            let s = try DiskStore(directory: dir.path, options: options())
            latest = try fill(s)
            let before = s.fileBytes
            #expect(s.segmentInfo().count == 1, "everything is in the active segment")
            let report = try s.compact()
            print("compact(): \(before) bytes before, \(s.fileBytes) after, \(s.liveBytes) live, reclaimed \(report.bytesReclaimed)")
            #expect(report.bytesReclaimed >= before / 2)
            #expect(s.fileBytes <= s.liveBytes + s.liveBytes / 16 + 8192)
            for (key, value) in latest { #expect(try s.value(forKey: key) == value) }
            // Nothing dead is left: a second compact() writes nothing.
            let again = try s.compact()
            #expect(again.segmentsCompacted == 0 && again.bytesWritten == 0)
            try s.close()
        }
        let s = try DiskStore(directory: dir.path, options: options())
        for (key, value) in latest { #expect(try s.value(forKey: key) == value) }
        #expect(s.count == 60)
    }

    @Test func aStoreWithEveryKeyRemovedShrinksToAFewKiBOnCompact() throws {
        let dir = TemporaryDirectory()
        do {
            let s = try DiskStore(directory: dir.path, options: options())
            _ = try fill(s)
            for k in 0..<60 { try s.removeValue(forKey: "key-\(k)") }
            let before = try bytesOnDisk(dir)
            try s.compact()
            s.waitForBackgroundWork()
            let after = try bytesOnDisk(dir)
            print("every key removed: \(before) bytes on disk before compact(), \(after) after")
            #expect(after <= 4096, "\(after) bytes on disk")
            #expect(s.fileBytes <= 4096)
            try s.close()
        }
        let s = try DiskStore(directory: dir.path, options: options())
        #expect(s.count == 0)
        for k in 0..<60 { #expect(try s.value(forKey: "key-\(k)") == nil, "a removed key came back") }
    }

    /// The sealed active segment's tombstones stay while an older segment that holds the
    /// records they hide remains (passes of at most 50 KB of live records: the first takes the
    /// sealed active segment alone), so the removed keys stay removed after a reopen from the
    /// files alone.
    @Test func removalsStayRemovedWhenAnOlderSegmentRemains() throws {
        let dir = TemporaryDirectory()
        var o = options(segmentSize: 256 << 10)
        o.compaction.maximumPassBytes = 50_000
        do {
            let s = try DiskStore(directory: dir.path, options: o)
            for k in 0..<20 { try s.setValue(Data(repeating: UInt8(k), count: 4000), forKey: "keep-\(k)") }
            for k in 0..<20 { try s.setValue(Data(repeating: UInt8(k), count: 4000), forKey: "old-\(k)") }
            try s.sealActiveSegment()   // a sealed segment holding the old values
            for k in 0..<20 { try s.removeValue(forKey: "old-\(k)") }
            for k in 0..<10 { try s.setValue(Data(repeating: 9, count: 1000), forKey: "new-\(k)") }
            let report = try s.compact()
            #expect(report.segmentsCompacted >= 2)
            #expect(s.count == 30)
            try s.close()
        }
        try removeIndexSnapshot(dir.path)   // reopen from the files alone
        let s = try DiskStore(directory: dir.path, options: o)
        #expect(s.count == 30)
        for k in 0..<20 { #expect(try s.value(forKey: "old-\(k)") == nil, "old-\(k) came back") }
        for k in 0..<20 { #expect(try s.value(forKey: "keep-\(k)") == Data(repeating: UInt8(k), count: 4000)) }
    }

    func backgroundOptions() -> StoreOptions {
        var o = options(compacting: true)
        o.compaction.checkInterval = .milliseconds(20)
        return o
    }


    @Test func aStoreWithEveryKeyRemovedShrinksByItself() throws {
        let dir = TemporaryDirectory()
        let s = try DiskStore(directory: dir.path, options: backgroundOptions())
        defer { try? s.close() }
        _ = try fill(s)
        for k in 0..<60 { try s.removeValue(forKey: "key-\(k)") }
        let peak = s.fileBytes
        // The index lets go of the inputs before they are unlinked: wait for the files.
        #expect(waitUntil(20) { s.fileBytes <= 4096 && ((try? bytesOnDisk(dir)) ?? .max) <= 4096 },
                "files \(s.fileBytes) bytes of a peak of \(peak), \((try? bytesOnDisk(dir)) ?? -1) on disk")
        // Then the compaction thread sleeps again.
        #expect(becomesQuiet(within: 10) { s.backgroundRuns.compaction }, "the compaction thread kept running")
    }

    /// A store written to steadily keeps its active segment (no rollover per check interval);
    /// once it goes idle with the segment mostly dead, the segment is sealed and compacted.
    @Test func steadyWritesDoNotSealTheActiveSegmentButIdlenessDoes() throws {
        let dir = TemporaryDirectory()
        let s = try DiskStore(directory: dir.path, options: backgroundOptions())
        defer { try? s.close() }
        var rng = SeededBytes(seed: 3)
        let active = try #require(s.segmentInfo().first { $0.isActive }).id
        let start = Date()
        var i = 0
        while Date().timeIntervalSince(start) < 0.6 {
            try s.setValue(rng.random(8 << 10), forKey: "hot-\(i % 8)")
            i += 1
            Thread.sleep(forTimeInterval: 0.002)
        }
        #expect(s.segmentInfo().map(\.id) == [active], "the active segment was sealed while being written")
        #expect(waitUntil(20) { s.fileBytes <= s.liveBytes + 16 << 10 }, "\(s.fileBytes) bytes for \(s.liveBytes) live")
        #expect(!s.segmentInfo().contains { $0.id == active }, "the idle, mostly dead segment was sealed and compacted")
        #expect(s.count == 8)
    }
}
