import Foundation
import Testing
@testable import Cask

/// The contract between the facade's memory layer and the disk layer (``MemoryCopies``): the
/// disk layer records the records that go and never calls up; the facade pulls those changes
/// before a lookup and hands its memory hits down.
@Suite struct MemoryCopiesTests {
    func makeCache(_ dir: TemporaryDirectory, clock: ManualClock? = nil, limits: StoreLimits = StoreLimits()) throws -> CaskCache {
        var o = CacheOptions()
        o.disk = options(clock: clock?.wallClock ?? .system)
        o.disk.limits = limits
        return try CaskCache(directory: dir.path, options: o)
    }

    func accessTime(_ store: DiskStore, _ key: String) throws -> Int64? {
        try store.metadata(forKey: key).map { Int64(($0.accessDate.timeIntervalSince1970 * 1000).rounded()) }
    }

    /// A hit answered from memory alone reaches the disk layer's access time on its own (the
    /// flusher thread), with no further call of the facade.
    @Test func aMemoryHitReachesTheDiskLayerWithoutAnotherCall() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let cache = try makeCache(dir, clock: clock)
        try cache.setData(Data("v".utf8), forKey: "k")
        let written = try #require(try accessTime(cache.disk, "k"))
        clock.advance(.seconds(5))
        #expect(try cache.data(forKey: "k") == Data("v".utf8))
        #expect(cache.memory.mayHaveUses, "the hit was answered from memory alone")
        let reached = waitUntil(5) { (try? accessTime(cache.disk, "k")) == written + 5_000 }
        let onDisk = try accessTime(cache.disk, "k")
        #expect(reached, "access time on disk: \(String(describing: onDisk)), expected \(written + 5_000)")
        try cache.close()
    }

    /// Every change made straight through ``CaskCache/disk`` (overwrite, removal, removal by
    /// prefix, eviction by a trim) drops the memory copy before the next lookup.
    @Test func changesMadeThroughTheDiskLayerAreNeverAnsweredFromMemory() throws {
        let dir = TemporaryDirectory()
        let cache = try makeCache(dir)
        for k in ["a", "b", "p:1", "t"] { try cache.setValue(k, forKey: k) }
        for k in ["a", "b", "p:1", "t"] { #expect(try cache.value(String.self, forKey: k) == k) }
        #expect(cache.memory.count == 4)
        try cache.disk.setValue(Data("\"A\"".utf8), forKey: "a")
        try cache.disk.removeValue(forKey: "b")
        try cache.disk.removeValues(withPrefix: "p:")
        try cache.disk.trim(toCount: 1)   // "a" was written last: "t" goes
        #expect(try cache.value(String.self, forKey: "a") == "A")
        #expect(try cache.value(String.self, forKey: "b") == nil)
        #expect(try cache.value(String.self, forKey: "p:1") == nil)
        #expect(try cache.value(String.self, forKey: "t") == nil)
        try cache.close()
    }

    /// More changes than the journal keeps, with no lookup between them: the facade cannot tell
    /// which copies are stale, so it drops every copy, and answers from disk.
    @Test func aFacadeThatFellBehindTheJournalDropsEveryCopy() throws {
        let dir = TemporaryDirectory()
        let cache = try makeCache(dir)
        try cache.setValue("old", forKey: "k")
        try cache.setValue("kept", forKey: "other")
        #expect(try cache.value(String.self, forKey: "k") == "old")
        let changes = RecordChanges.capacity + RecordChanges.retainedAfterApply + 10
        for i in 0..<changes { try cache.disk.setValue(Data("\"\(i)\"".utf8), forKey: "k") }
        #expect(try cache.value(String.self, forKey: "k") == "\(changes - 1)")
        #expect(try cache.value(String.self, forKey: "other") == "kept")
        try cache.close()
    }

    /// A read that overlaps a removal of its key never leaves a copy behind, even when a third
    /// thread's lookups apply the removal between the read and the making of its copy: after
    /// both return, the key is absent from memory as from disk. Many rounds, on threads.
    @Test func aReadRacingARemovalLeavesNoCopy() throws {
        let dir = TemporaryDirectory()
        let cache = try makeCache(dir)
        try cache.setValue(0, forKey: "other")
        let stale = Locked(0)
        for round in 0..<3_000 {
            let key = "k\(round % 7)"
            try cache.setValue(round, forKey: key)
            cache.handleMemoryPressure()   // the next read comes from disk and makes a copy
            let done = Locked(0)
            runOnThreads(3) { t in
                switch t {
                case 0: _ = try? cache.value(Int.self, forKey: key)
                case 1: _ = try? cache.disk.removeValue(forKey: key)
                default: while done.withLock({ $0 }) < 2 { _ = try? cache.value(Int.self, forKey: "other") }
                }
                if t < 2 { done.withLock { $0 += 1 } }
            }
            cache.copies.catchUp()   // what the next lookup does first
            if cache.memory.contains(key) { stale.withLock { $0 += 1 } }
        }
        #expect(stale.withLock { $0 } == 0)
        try cache.close()
    }

    /// A cache dropped without `close()` while hits wait to be handed down closes its store as
    /// it goes: the flusher thread keeps no reference to it, so the folder opens again at once.
    @Test func aDroppedCacheFreesItsFolderAtOnce() throws {
        let dir = TemporaryDirectory()
        for round in 0..<30 {
            let cache = try makeCache(dir)
            try cache.setValue(round, forKey: "k")
            #expect(try cache.value(Int.self, forKey: "k") == round)   // a memory hit: a use to hand down
            #expect(cache.memory.mayHaveUses)
        }
        let last = try makeCache(dir)
        #expect(try last.value(Int.self, forKey: "k") == 29)
        try last.close()
    }

    /// The store keeps no journal for a store used alone, and the facade's journal is the one
    /// its disk layer writes.
    @Test func onlyAStoreWithACacheAboveItKeepsAJournal() throws {
        let alone = TemporaryDirectory()
        let store = try DiskStore(directory: alone.path, options: options())
        #expect(store.state.withLock { $0.keys.changes == nil })
        try store.close()
        let dir = TemporaryDirectory()
        let cache = try makeCache(dir)
        #expect(cache.disk.state.withLock { $0.keys.changes } === cache.copies.changes)
        try cache.close()
    }
}
