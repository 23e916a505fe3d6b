import CaskTesting
import Foundation
import Testing
@testable import Cask

@Suite struct LimitsTests {
    func store(_ dir: TemporaryDirectory, limits: StoreLimits, clock: ManualClock? = nil, events: Locked<[StoreEvent]>? = nil, segmentSize: Int = 4096, compacting: Bool = false) throws -> DiskStore {
        var o = options(segmentSize: segmentSize, clock: clock?.wallClock ?? .system, compacting: compacting)
        o.limits = limits
        if let events { o.eventHandler = { e in events.withLock { $0.append(e) } } }
        return try DiskStore(directory: dir.path, options: o)
    }

    @Test func countLimitEvictsLeastRecentlyUsedAndEvictionSurvivesReopen() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let events = Locked<[StoreEvent]>([])
        do {
            let s = try store(dir, limits: StoreLimits(countLimit: 3), clock: clock, events: events)
            for k in ["a", "b", "c"] { try s.setValue(Data(k.utf8), forKey: k); clock.advance(.seconds(1)) }
            _ = try s.value(forKey: "a")            // a read makes a recent again
            clock.advance(.seconds(1))
            try s.setValue(Data("d".utf8), forKey: "d")
            #expect(s.keys().sorted() == ["a", "c", "d"])
            #expect(s.statistics.evictionsByCount == 1)
            #expect(events.withLock { $0 }.contains(.evicted(key: "b", cause: .count)))
            try s.close()
        }
        let s = try store(dir, limits: StoreLimits(countLimit: 3), clock: clock)
        #expect(s.keys().sorted() == ["a", "c", "d"])
    }

    @Test func lruOrderSurvivesACleanReopen() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        do {
            let s = try store(dir, limits: StoreLimits(), clock: clock, segmentSize: 4096)
            for i in 0..<100 { try s.setValue(Data(repeating: UInt8(i), count: 100), forKey: "k\(i)"); clock.advance(.seconds(1)) }
            // The oldest writes (in sealed segments by now) are read: they become the most recent.
            for i in 0..<10 { _ = try s.value(forKey: "k\(i)"); clock.advance(.seconds(1)) }
            try s.close()
        }
        let s = try store(dir, limits: StoreLimits(), clock: clock, segmentSize: 4096)
        try s.trim(toCount: 10)
        #expect(s.keys().sorted() == (0..<10).map { "k\($0)" }.sorted())
    }

    @Test func pinnedItemsAreEvictedLast() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let s = try store(dir, limits: StoreLimits(countLimit: 2), clock: clock)
        try s.setValue(Data("p".utf8), forKey: "pinned", isPinned: true)
        clock.advance(.seconds(1))
        for i in 0..<5 { try s.setValue(Data("\(i)".utf8), forKey: "k\(i)"); clock.advance(.seconds(1)) }
        #expect(s.keys().sorted() == ["k4", "pinned"])
        try s.trim(toCount: 0)
        #expect(s.count == 0)
    }

    @Test func ageLimitAndTrimToDateDropItemsNotAccessed() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let s = try store(dir, limits: StoreLimits(ageLimit: .seconds(60)), clock: clock)
        try s.setValue(Data("1".utf8), forKey: "read")
        try s.setValue(Data("2".utf8), forKey: "idle")
        try s.setValue(Data("3".utf8), forKey: "pinned", isPinned: true)
        clock.advance(.seconds(40))
        _ = try s.value(forKey: "read")
        clock.advance(.seconds(40))
        #expect(try s.value(forKey: "idle") == nil)
        #expect(try s.value(forKey: "read") == Data("1".utf8))
        #expect(try s.value(forKey: "pinned") == Data("3".utf8))
        #expect(s.statistics.evictionsByAge == 1)
        try s.setValue(Data("4".utf8), forKey: "fresh")
        clock.advance(.seconds(5))
        // "read" and "fresh" were last touched at +80 s; the cut-off is +83 s; pinned items stay.
        #expect(try s.trim(toDate: Date(milliseconds: clock.milliseconds - 2000)) == 2)
        #expect(s.keys() == ["pinned"])
    }

    @Test func trimsBySizeAndLargestFirstAndWipes() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let s = try store(dir, limits: StoreLimits(), clock: clock)
        var rng = SeededBytes(seed: 4)
        for i in 1...10 { try s.setValue(rng.random(i * 100), forKey: "k\(i)"); clock.advance(.seconds(1)) }
        try s.trimLargestFirst(toSize: s.liveBytes - 1500)
        #expect(!s.contains("k10") && !s.contains("k9") && s.contains("k1"))
        try s.trim(toSize: s.liveBytes - 1)
        #expect(!s.contains("k1") && s.contains("k8"))
        try s.setPinned(true, forKey: "k8")
        #expect(try s.metadata(forKey: "k8")?.isPinned == true)
        let unpinned = s.count - 1
        #expect(try s.removeAll(pinned: false) == unpinned)
        #expect(s.keys() == ["k8"])
        #expect(try s.removeAll(pinned: true) == 1)
        #expect(s.count == 0)
    }

    /// Bytes of segment, hint and temporary files in the store's folder.
    func filesOnDisk(_ dir: TemporaryDirectory) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix(".cask") || $0.hasSuffix(".hint") || $0.hasSuffix(".tmp") }
            .reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: dir.file($1))[.size] as? Int) ?? 0) }
    }

    @Test func diskUseStaysWithinTheDiskLimitUnderEndlessOverwrites() throws {
        let dir = TemporaryDirectory()
        let limit = 1 << 20
        let s = try store(dir, limits: StoreLimits(byteLimit: limit), segmentSize: 64 << 10, compacting: true)
        let diskLimit = try #require(s.options.diskLimit)
        var rng = SeededBytes(seed: 8)
        var written = 0, worst = 0, i = 0
        while written < 10 * limit {
            let key = "key-\(rng.next() % 3000)"
            let value = rng.random(Int(rng.next() % 600) + 50)
            try s.setValue(value, forKey: key)
            written += value.count
            i += 1
            if i % 50 == 0 {
                s.waitForBackgroundWork()
                worst = max(worst, try filesOnDisk(dir))
            }
        }
        print("byte limit: wrote \(written) bytes, worst disk use \(worst) for a disk limit of \(diskLimit)")
        #expect(worst <= diskLimit, "disk use never above the disk limit")
        #expect(s.statistics.evictionsBySize > 0 && s.statistics.compactions > 0)
        #expect(s.liveBytes <= limit && s.liveBytes >= limit * 9 / 10, "live \(s.liveBytes) of \(limit)")
        // What remains readable is the newest value of each key. The compaction thread may
        // still be evicting ahead of the limit: a key it takes between the listing and the read
        // is gone from the index too.
        s.waitForBackgroundWork()
        for key in s.keys().prefix(200) {
            let value = try s.value(forKey: key)
            #expect(value != nil || !s.contains(key), "\(key) is listed and in the index, but reads nil")
        }
    }

    @Test func aByteLimitAloneIsEnough() throws {
        var o = StoreOptions()
        o.limits.byteLimit = 96 << 20
        #expect(o.segmentSize == 3 << 20, "the segment size follows from the limit")
        #expect(o.explicitSegmentSize == nil)
        #expect(o.diskBudget == 143_804_709 && o.diskLimit == 143_804_709 + (12 << 20), "96 MiB / 0.7, and 4 segments")
        let dir = TemporaryDirectory()
        let s = try DiskStore(directory: dir.path, options: o)
        try s.setValue(Data("v".utf8), forKey: "k")
        try s.close()
        // PINCache's default limit; a small one; a large one (the 64 MiB default size).
        o.limits.byteLimit = 50_000_000
        #expect(o.segmentSize == 1_560_576)
        o.limits.byteLimit = 100 << 10
        #expect(o.segmentSize == 4096)   // 3,200 bytes, rounded down to a multiple of 4 KiB, at least 4 KiB
        #expect(o.diskBudget == 146_286)
        o.limits.byteLimit = 4 << 30
        #expect(o.segmentSize == 64 << 20)
        // A segment size set explicitly is kept; the disk bound grows with it.
        o.limits.byteLimit = 96 << 20
        o.segmentSize = 64 << 20
        #expect(o.explicitSegmentSize == 64 << 20)
        #expect(o.diskBudget == 143_804_709 && o.diskLimit == 143_804_709 + (256 << 20))
        // A limit of a few bytes is valid: the files then stay within a few segments.
        o.limits.byteLimit = 100
        o.segmentSize = 4096
        #expect(o.diskBudget == 8192 && o.diskLimit == 8192 + 16384)
        _ = try DiskStore(directory: TemporaryDirectory().path, options: o)
        o.limits.byteLimit = 0
        #expect(throws: CaskError.self) { try DiskStore(directory: TemporaryDirectory().path, options: o) }
    }

    /// PINCache's default, 50 MB, as the only option: random overwrites of 10,000 keys of 8 KiB
    /// (80 MB, more than the limit) keep disk use within ``StoreOptions/diskLimit`` and the live
    /// records between 2% under the target and the target, which is the limit less the hint
    /// files' small share (StoreLimits; LimitsAndEviction.md).
    @Test func aFiftyMegabyteLimitAloneKeepsTheDataItSaysAndDiskUseWithinItsBound() throws {
        let dir = TemporaryDirectory()
        var o = StoreOptions()
        o.limits.byteLimit = 50_000_000
        o.durability = .none
        o.compression = .never
        o.logger.logLevel = .critical
        let s = try DiskStore(directory: dir.path, options: o)
        defer { try? s.close() }
        let limit = 50_000_000, diskLimit = o.diskLimit!
        var rng = SeededBytes(seed: 50)
        var written = 0, worst = 0, i = 0
        while written < 3 * limit {
            let value = rng.random(8 << 10)
            try s.setValue(value, forKey: "key-\(rng.next() % 10_000)")
            written += value.count
            i += 1
            if i % 100 == 0 {
                s.waitForBackgroundWork()
                worst = max(worst, try filesOnDisk(dir))
            }
        }
        s.waitForBackgroundWork()
        let stats = s.statistics
        let live = s.liveBytes, target = stats.liveByteTarget ?? 0
        print("byte limit alone (50 MB, segment \(o.segmentSize)): worst disk use \(worst) of \(diskLimit), live \(live) (\(Double(live) / Double(limit)) of the limit, target \(target)), compaction wrote \(stats.compactionBytesWritten) for \(written) written")
        #expect(worst <= diskLimit, "disk use never above the disk limit")
        #expect(target >= limit * 99 / 100 && target <= limit, "target \(target)")
        #expect(live <= target && live >= target * 97 / 100, "live \(live), target \(target)")
        #expect(stats.evictionsBySize > 0 && stats.compactions > 0)
    }

    /// A limit of N items' bytes keeps at least N − 1 of them (the record headers and hint
    /// entries take the rest), at small limits too (PINCache's and Nuke's limit tests): the
    /// segment size and headroom scale with the limit instead of taking a share of it.
    @Test(arguments: [(400, 5.5), (400, 2.5), (1000, 5.5), (1000, 2.5), (1000, 10), (8192, 20), (30_000, 3)])
    func aLimitOfNItemsBytesKeepsAtLeastNMinusOne(valueSize: Int, items: Double) throws {
        let dir = TemporaryDirectory()
        let limit = Int(Double(valueSize) * items)
        let s = try store(dir, limits: StoreLimits(byteLimit: limit), segmentSize: StoreOptions.defaultSegmentSize(byteLimit: limit))
        var rng = SeededBytes(seed: UInt64(valueSize))
        for i in 0..<200 { try s.setValue(rng.random(valueSize), forKey: "item-\(i)") }
        let kept = s.keys()
        let fewest = Int(items.rounded(.down)) - 1
        #expect(kept.count >= fewest, "a limit of \(items) items of \(valueSize) bytes kept \(kept.count)")
        #expect(s.liveBytes <= limit)
        // The newest items are the ones kept, and each reads back whole.
        for key in kept {
            #expect(try s.value(forKey: key)?.count == valueSize)
            #expect(Int(key.dropFirst(5))! >= 200 - kept.count - 1)
        }
    }

    /// A put over a limit evicts from the candidates an earlier walk of the index left
    /// (StoreState+Eviction.swift): few walks for many evictions, and still exactly in LRU
    /// order, keys written since the walk, keys read since it and pinned keys included.
    @Test func putsOverALimitEvictFromAnEarlierWalksCandidatesInExactOrder() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let s = try store(dir, limits: StoreLimits(countLimit: 1000), clock: clock, segmentSize: 1 << 20)
        var lastUse: [String: Int] = [:], pinned: Set<String> = []
        var tick = 0
        func use(_ key: String) {
            if !pinned.contains(key) { lastUse[key] = tick }
            tick += 1
            clock.advance(.milliseconds(1))
        }
        for i in 0..<20_000 {
            try s.setValue(Data("v\(i)".utf8), forKey: "k\(i)", isPinned: i % 1000 == 1)
            if i % 1000 == 1 { pinned.insert("k\(i)") } else { use("k\(i)") }
            if i % 7 == 0, i > 500 {   // read an item of the oldest half: it must outlive the rest
                let key = "k\(i - 500 - i % 300)"
                if try s.value(forKey: key) != nil { use(key) }
            }
        }
        let expected = pinned.union(lastUse.sorted { $0.value > $1.value }.prefix(1000 - pinned.count).map(\.key))
        #expect(Set(s.keys()) == expected)
        let stats = s.statistics
        #expect(stats.evictionsByCount == 19_000)
        #expect(stats.evictionWalksOnTheWritePath * 20 < stats.evictionsByCount, "\(stats.evictionWalksOnTheWritePath) walks")
    }

    /// When compaction cannot keep up with writes under a byte limit (here there is no
    /// compaction thread at all), writers are slowed and then wait for compaction; the store
    /// keeps its live target: the cache does not shrink to make room, and the files stay within
    /// their bound.
    @Test func compactionFallingBehindSlowsWritersAndKeepsTheCacheWhole() throws {
        let dir = TemporaryDirectory()
        var o = options(segmentSize: 64 << 10)   // no compaction thread: writes past the hard limit compact
        o.limits.byteLimit = 1 << 20
        let s = try DiskStore(directory: dir.path, options: o)
        var bytes = SeededBytes(seed: 9)
        var over = 0, worst = 0
        for i in 0..<6000 {
            try s.setValue(bytes.random(1000), forKey: "k\(i % 3000)")
            // A hint file written after the put lowers the target a little (its share) until
            // the next put evicts to it.
            let target = s.statistics.liveByteTarget!
            if s.liveBytes > target + target / 100 { over += 1 }
            if i % 100 == 0 { worst = max(worst, try filesOnDisk(dir)) }
        }
        #expect(over == 0, "live bytes over the target after \(over) puts")
        let stats = s.statistics
        #expect(stats.compactionsOnTheWritePath > 0)
        // On the way to the hard limit, writes in its last half segment were slowed down.
        #expect(stats.delayedWrites > 0)
        #expect(stats.liveBytes >= (1 << 20) * 9 / 10, "live \(stats.liveBytes)")
        #expect(worst <= o.diskLimit!, "disk \(worst) of \(o.diskLimit!)")
    }
}
