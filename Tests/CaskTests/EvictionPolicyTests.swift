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

/// The frequency-aware policy's adaptive handicap (``TinyLFUAdmission``) and its ghost lists.
@Suite struct AdaptiveAdmissionTests {
    @Test func aGhostListForgetsTheOldestAndGivesEachHashBackOnce() {
        var ghosts = GhostList(capacity: 3)
        for h: UInt64 in [1, 2, 3, 3] { ghosts.insert(h) }
        #expect(ghosts.count == 3)
        ghosts.insert(4)   // forgets 1
        #expect(!ghosts.remove(1) && ghosts.remove(2) && !ghosts.remove(2))
        ghosts.insert(2)   // again, in a new slot: the ring's old slot of 2 must not drop it
        ghosts.insert(5)
        ghosts.insert(6)
        #expect(ghosts.remove(2) || ghosts.count <= 3)
        #expect(ghosts.count <= 3, "never more than its capacity")
        ghosts.ensureCapacity(100)
        #expect(ghosts.capacity == 100 && ghosts.count == 0, "resized when the cache grows past twice")
        ghosts.ensureCapacity(120)
        #expect(ghosts.capacity == 100, "kept within a factor of two")
    }

    @Test func theBiasRisesWhenDeclinedKeysComeBackAndFallsWhenEvictedOnesDo() {
        var admission = TinyLFUAdmission(capacity: 1000)
        let popular: UInt64 = 7
        for _ in 0..<10 { admission.noteRequest(popular, keys: 1000, missed: false) }
        // A new key asked for once loses to the popular victim; asked for again soon after, it
        // was declined too strictly: the handicap grows, until the key gets in.
        var rounds = 0
        let newcomer: UInt64 = 99
        while true {
            admission.noteRequest(newcomer, keys: 1000, missed: true)
            if admission.admits(newcomer, over: popular) { break }
            rounds += 1
            #expect(rounds < 20, "a key declined again and again must get in")
            if rounds >= 20 { return }
        }
        let raised = admission.bias
        #expect(raised > 0, "the bias rose (rounds: \(rounds))")
        #expect(rounds <= 6, "the bias and the newcomer's own count together let it in within a few requests: took \(rounds)")
        // Keys evicted and asked for again: recency alone kept the wrong keys.
        for h: UInt64 in 1000..<1100 { admission.noteEviction(h) }
        for h: UInt64 in 1000..<1100 { admission.noteRequest(h, keys: 1000, missed: true) }
        #expect(admission.bias == 0, "back to TinyLFU after \(raised) evicted keys came back")
        // Bounded above: a cache that declines everything that comes back admits all of it.
        for h: UInt64 in 2000..<2100 {
            admission.noteRequest(h, keys: 1000, missed: true)
            _ = admission.admits(h, over: popular)
            admission.noteRequest(h, keys: 1000, missed: true)
        }
        #expect(admission.bias <= TinyLFUAdmission.maximumBias)
        // A hit skips the ghost lists: a key held now says nothing about admission.
        let before = admission.bias
        admission.noteEviction(5000)
        admission.noteRequest(5000, keys: 1000, missed: false)
        #expect(admission.bias == before && admission.evicted.contains(5000), "a hit leaves the ghost where it was")
    }

    /// Popularity moves: 300 keys asked for 20 times each, then 30 new keys asked for in turn.
    /// Plain TinyLFU declines the new keys until they were asked for more often than the old
    /// ones, still in the sketch; the adaptive handicap lets them in within a few rounds.
    @Test(arguments: ["disk", "memory"])
    func whenPopularityMovesTheNewPopularKeysGetIn(layer: String) throws {
        let dir = TemporaryDirectory()
        var o = options(segmentSize: StoreOptions.defaultSegmentSize(byteLimit: 256 << 10))
        o.compression = .never
        o.limits.byteLimit = 256 << 10
        o.limits.policy = .frequencyAware
        let disk = layer == "disk" ? try DiskStore(directory: dir.path, options: o) : nil
        let memory = MemoryCache<Data>(limits: .init(costLimit: 256 << 10, policy: .frequencyAware))
        let value = Data(count: 1000)
        func request(_ key: String) throws {
            if let disk {
                if try disk.value(forKey: key) == nil { try disk.setValue(value, forKey: key) }
            } else if memory.value(forKey: key) == nil {
                memory.setValue(value, forKey: key, cost: value.count)
            }
        }
        var rng = FastRandom(seed: 44)
        for _ in 0..<20 { for i in (0..<300).shuffled(using: &rng) { try request("old-\(i)") } }
        for _ in 0..<5 { for i in (0..<30).shuffled(using: &rng) { try request("new-\(i)") } }
        let held = try (0..<30).filter { i in
            try disk.map { try $0.value(forKey: "new-\(i)") != nil } ?? (memory.value(forKey: "new-\(i)") != nil)
        }.count
        #expect(held >= 27, "\(layer): \(held) of the 30 new popular keys held after 5 rounds")
        try disk?.close()
    }
}
