import CaskSupport
import CaskTesting
import Foundation
import Testing
@testable import Cask

/// The frequency-aware policy (``EvictionPolicy/frequencyAware``) and its sketch: what it
/// keeps that LRU does not, and what it never declines.
@Suite struct EvictionPolicyTests {
    func store(_ dir: TemporaryDirectory, _ policy: EvictionPolicy, byteLimit: Int = 256 << 10) throws -> DiskStore {
        var o = options(segmentSize: StoreOptions.defaultSegmentSize(byteLimit: byteLimit))
        o.compression = .never
        o.limits.byteLimit = byteLimit
        o.limits.policy = policy
        return try DiskStore(directory: dir.path, options: o)
    }

    /// Cache-aside: a read, and on a miss a write.
    func request(_ s: DiskStore, _ key: String, _ value: Data) throws {
        if try s.value(forKey: key) == nil { try s.setValue(value, forKey: key) }
    }

    /// Twenty keys read five times, then a scan of 600 keys read once each (more than twice
    /// what the limit holds), the twenty read once more halfway: LRU loses the popular keys to
    /// the scan; the frequency-aware policy declines the scan's keys and keeps them.
    @Test(arguments: [EvictionPolicy.leastRecentlyUsed, .frequencyAware])
    func aScanDoesNotFlushThePopularKeys(policy: EvictionPolicy) throws {
        let dir = TemporaryDirectory()
        let s = try store(dir, policy)
        let value = Data(count: 1000)
        for _ in 0..<5 { for i in 0..<20 { try request(s, "hot-\(i)", value) } }
        for i in 0..<600 {
            try request(s, "scan-\(i)", value)
            if i == 300 { for h in 0..<20 { try request(s, "hot-\(h)", value) } }
        }
        let kept = (0..<20).filter { s.contains("hot-\($0)") }.count
        let declined = s.statistics.admissionsDeclined
        if policy == .frequencyAware {
            #expect(kept == 20 && declined > 300, "kept \(kept) popular keys, declined \(declined)")
        } else {
            #expect(kept == 0 && declined == 0, "kept \(kept) popular keys, declined \(declined)")
        }
        #expect(s.liveBytes <= 256 << 10 && s.liveBytes >= (256 << 10) * 9 / 10, "live \(s.liveBytes)")
        try s.close()
    }

    /// A declined put returns normally and changes nothing; overwrites and pinned puts are never
    /// declined; a key asked for again wins its place.
    @Test func whatTheFrequencyAwarePolicyNeverDeclines() throws {
        let dir = TemporaryDirectory()
        let s = try store(dir, .frequencyAware)
        let value = Data(count: 1000)
        for _ in 0..<4 { for i in 0..<300 { try request(s, "k\(i)", value) } }
        let before = s.statistics.admissionsDeclined
        let count = s.count
        try s.setValue(value, forKey: "once")
        #expect(s.statistics.admissionsDeclined == before + 1)
        #expect(try s.value(forKey: "once") == nil && s.count == count)
        let held = try #require(s.keys().first)
        try s.setValue(Data(count: 900), forKey: held)
        #expect(try s.value(forKey: held)?.count == 900, "an overwrite is stored")
        try s.setValue(value, forKey: "pinned", isPinned: true)
        #expect(try s.value(forKey: "pinned") != nil, "a pinned put is stored")
        for _ in 0..<6 { _ = try s.value(forKey: "again") }
        try s.setValue(value, forKey: "again")
        #expect(try s.value(forKey: "again") != nil, "a key asked for often is admitted")
        try s.close()
    }

    @Test func theSketchCountsCapsHalvesAndGrows() {
        var sketch = FrequencySketch(capacity: 100)
        let a: UInt64 = 0x1234_5678_9ABC_DEF0, b: UInt64 = 42
        for _ in 0..<5 { sketch.increment(a) }
        #expect(sketch.frequency(a) == 5 && sketch.frequency(b) == 0)
        for _ in 0..<20 { sketch.increment(a) }
        #expect(sketch.frequency(a) == 15, "4-bit counters stop at 15")
        for i in 0..<UInt64(sketch.sampleSize) { sketch.increment(i &* 0x9E37_79B9_7F4A_7C15) }
        #expect(sketch.frequency(a) <= 8, "halved by an aging step")
        #expect(sketch.additions < sketch.sampleSize)
        sketch.ensureCapacity(5000)
        #expect(sketch.sampleSize == 50_000 && sketch.frequency(a) == 0, "rebuilt for more keys")
        for _ in 0..<3 { sketch.increment(b) }
        sketch.ensureCapacity(6000)
        #expect(sketch.sampleSize == 60_000 && sketch.frequency(b) == 3, "a longer period keeps the counts")
    }
}
