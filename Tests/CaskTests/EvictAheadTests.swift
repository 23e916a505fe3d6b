import Foundation
import Testing
@testable import Cask

/// The compaction thread evicts ahead of the byte limit (DiskStore+Eviction.swift): past the low
/// watermark, with no put reaching the limit, it evicts the least recently used items down to
/// the lower mark, and spares everything read recently.
@Suite struct EvictAheadTests {
    @Test func theCompactionThreadEvictsTheLeastRecentlyUsedAheadOfTheLimit() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        var o = options(segmentSize: 256 << 10, clock: clock.wallClock, compacting: true)
        o.limits.byteLimit = 8 << 20
        o.compaction.checkInterval = .milliseconds(20)
        let store = try DiskStore(directory: dir.path, options: o)
        var bytes = SeededBytes(seed: 3)
        let value = bytes.random(1000)
        func level() -> (live: Int64, target: Int64) { store.state.withLock { ($0.liveBytes, $0.liveByteTarget ?? 0) } }
        func evicted() -> Int { store.statistics.evictionsBySize }
        /// Puts new keys, one millisecond apart (LRU order is write order), until live bytes pass
        /// the low watermark, then waits until the compaction thread is below it and quiet.
        var n = 0
        func fillUntilEvictedAhead() throws {
            // Up to just past the low watermark, well below the target: from here on no put
            // runs, so whatever is evicted, the compaction thread evicted.
            while level().live <= level().target - level().target / 100 && n < 50_000 {
                try store.setValue(value, forKey: "k\(n)")
                clock.advance(.milliseconds(1))
                n += 1
            }
            let deadline = Date().addingTimeInterval(10)
            var last = -1
            while (level().live > level().target - level().target / 100 || evicted() != last) && Date() < deadline {
                last = evicted()
                usleep(50_000)
            }
        }
        try fillUntilEvictedAhead()
        #expect(evicted() > 0 && store.statistics.evictionsAhead > 0)
        #expect(level().live <= level().target - level().target / 100, "not below the low watermark")
        // The oldest tenth of what is left becomes more recently used than the rest of it.
        let before = (0..<n).map { "k\($0)" }.filter { key in store.state.withLock { $0.index.entry(forKey: key) } != nil }
        let recent = Array(before.prefix(before.count / 10)), rest = Array(before.dropFirst(before.count / 10))
        for key in recent { #expect(try store.value(forKey: key) != nil); clock.advance(.milliseconds(1)) }
        try fillUntilEvictedAhead()
        #expect(store.statistics.evictionsAhead == evicted(), "a put evicted: no put should have reached the target")
        let lost = recent.filter { key in store.state.withLock { $0.index.entry(forKey: key) } == nil }
        #expect(lost.isEmpty, "read after the rest and evicted first: \(lost.prefix(5)) of \(recent.count); ahead \(store.statistics.evictionsAhead) of \(evicted())")
        // What went are the oldest of the rest, in order.
        let present = try rest.map { try store.value(forKey: $0) != nil }
        let firstKept = present.firstIndex(of: true) ?? present.count
        #expect(firstKept > 0, "nothing was evicted from the least recently used")
        #expect(present[firstKept...].allSatisfy { $0 }, "eviction ahead skipped older items for newer ones")
        try store.close()
    }
}
