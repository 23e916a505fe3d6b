import Foundation
import Testing
import Cask
import CaskTesting

/// Nodes (caches in their own folders) sharing one ``InMemorySharedTier``: read-through,
/// coherence of local copies, removals by key, prefix and tag, outages, versions.
@Suite struct SharedTierTests {
    /// A node of a test cluster.
    static func node(_ dir: TemporaryDirectory, _ name: String, tier: any SharedTier, id: UInt32,
                     timeout: Duration = .milliseconds(200), retry: Duration = .milliseconds(20)) throws -> CaskCache {
        var o = CacheOptions()
        o.disk = options()
        o.sharedTier = tier
        o.sharedTierNode = id
        o.sharedTierTimeout = timeout
        o.sharedTierRetryDelay = retry
        return try CaskCache(directory: dir.file(name), options: o)
    }

    /// Waits until every node sent its changes and followed the tier to its last one.
    static func settle(_ nodes: [CaskCache], _ tier: InMemorySharedTier) async -> Bool {
        await eventually(10) {
            let n = tier.appliedChanges.count
            return nodes.allSatisfy { node in
                node.sharedTierStatistics?.changesWaiting == 0 && (n == 0 || node.sharedTierCursor?.hasSuffix(":\(n)") == true)
            }
        }
    }

    @Test func aColdNodeReadsThroughAndKeepsALocalCopy() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let a = try Self.node(dir, "a", tier: tier, id: 1), b = try Self.node(dir, "b", tier: tier, id: 2)
        try await a.setValue("v1", forKey: "k")
        #expect(await Self.settle([a, b], tier))
        #expect(b.contains("k") == false)
        #expect(try syncValue(b, "k") == nil)          // a synchronous read stays local
        #expect(try await b.value(String.self, forKey: "k") == "v1")   // an async one reads through
        #expect(b.contains("k"))                                        // and keeps a local copy
        #expect(b.sharedTierStatistics?.hits == 1)
        try await a.close(); try await b.close()
    }

    @Test func aWriteOnOneNodeRemovesTheOthersCopies() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let a = try Self.node(dir, "a", tier: tier, id: 1), b = try Self.node(dir, "b", tier: tier, id: 2)
        try await a.setValue("v1", forKey: "k")
        #expect(await Self.settle([a, b], tier))
        #expect(try await b.value(String.self, forKey: "k") == "v1")
        try await a.setValue("v2", forKey: "k")
        #expect(await Self.settle([a, b], tier))
        #expect(!b.contains("k"))
        #expect(try await b.value(String.self, forKey: "k") == "v2")
        try await a.close(); try await b.close()
    }

    @Test func removalsByKeyPrefixAndTagReachTheOtherNodes() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let a = try Self.node(dir, "a", tier: tier, id: 1), b = try Self.node(dir, "b", tier: tier, id: 2)
        let tagged = CacheEntryOptions(timeToLive: .seconds(60), tags: ["team:7"])
        for key in ["user:1", "user:2", "doc:1", "keep"] { try await a.setValue(key, forKey: key) }
        _ = try await a.value(forKey: "t:1", as: String.self, options: tagged) { "tagged" }
        #expect(await Self.settle([a, b], tier))
        for key in ["user:1", "user:2", "doc:1", "keep"] { #expect(try await b.value(String.self, forKey: key) == key) }
        #expect(try await b.value(forKey: "t:1", as: String.self, options: tagged) { "loaded on b" } == "tagged")
        try await a.removeValue(forKey: "doc:1")
        try await a.removeValues(withPrefix: "user:")
        try await a.removeValues(taggedWith: "team:7")
        #expect(await Self.settle([a, b], tier))
        for key in ["user:1", "user:2", "doc:1", "t:1"] {
            #expect(!b.contains(key), "\(key) left on b's disk")
            #expect(try await b.value(String.self, forKey: key) == nil, "\(key) served by b")
        }
        #expect(try await b.value(String.self, forKey: "keep") == "keep")
        // Written after the removal: kept.
        try await a.setValue("new", forKey: "user:3")
        #expect(await Self.settle([a, b], tier))
        #expect(try await b.value(String.self, forKey: "user:3") == "new")
        try await a.close(); try await b.close()
    }

    @Test func anOutageCostsFreshnessOnlyAndTheQueueIsReplayed() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let a = try Self.node(dir, "a", tier: tier, id: 1), b = try Self.node(dir, "b", tier: tier, id: 2)
        tier.isDown = true
        try await a.setValue("v1", forKey: "k")                     // acknowledged locally
        #expect(try await a.value(String.self, forKey: "k") == "v1")
        #expect(try await b.value(String.self, forKey: "k") == nil)  // a miss, not an error
        #expect((a.sharedTierStatistics?.changesWaiting ?? 0) == 1)
        tier.isDown = false
        #expect(await Self.settle([a, b], tier))
        try await Task.sleep(for: .milliseconds(50))                 // the breaker's open period
        #expect(try await b.value(String.self, forKey: "k") == "v1")
        try await a.close(); try await b.close()
    }

    @Test func aSlowTierNeverHoldsACallPastTheTimeout() async throws {
        let dir = try TemporaryDirectory()
        let tier = SlowTier(base: InMemorySharedTier(), delay: .seconds(30))
        let a = try Self.node(dir, "a", tier: tier, id: 1, timeout: .milliseconds(100), retry: .seconds(60))
        let start = ContinuousClock.now
        try await a.setValue("v1", forKey: "k")
        #expect(try await a.value(String.self, forKey: "x") == nil)
        #expect(try await a.value(String.self, forKey: "y") == nil)  // the breaker is open: not even tried
        #expect(ContinuousClock.now - start < .seconds(10))
        #expect(a.sharedTierStatistics?.failures ?? 0 >= 1)
        try await a.close()
    }

    @Test func anOlderWriteNeverReplacesANewerOne() async throws {
        let tier = InMemorySharedTier()
        let new = SharedEntry(value: Data("new".utf8), freshUntil: 0, expiry: 0, tags: [], version: SharedVersion(milliseconds: 2_000, node: 1))
        let old = SharedEntry(value: Data("old".utf8), freshUntil: 0, expiry: 0, tags: [], version: SharedVersion(milliseconds: 1_000, node: 9))
        try await tier.apply(.set(key: "k", entry: new))
        try await tier.apply(.set(key: "k", entry: old))
        #expect(try await tier.entry(forKey: "k")?.value == Data("new".utf8))
        try await tier.apply(.removePrefix("k", version: SharedVersion(milliseconds: 1_500, node: 1)))
        #expect(try await tier.entry(forKey: "k")?.value == Data("new".utf8))   // written after the removal
        try await tier.apply(.removeTag("t", version: SharedVersion(milliseconds: 3_000, node: 1)))
        try await tier.apply(.set(key: "t1", entry: SharedEntry(value: Data(), freshUntil: 0, expiry: 0, tags: ["t"], version: SharedVersion(milliseconds: 2_500, node: 2))))
        #expect(try await tier.entry(forKey: "t1") == nil)                        // an older write the tag removal covers
    }

    @Test func versionsOrderAsTheirText() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<1000 {
            let a = SharedVersion(milliseconds: Int64.random(in: 0...1 << 45, using: &rng), node: .random(in: 0...UInt32.max, using: &rng))
            let b = SharedVersion(milliseconds: Int64.random(in: 0...1 << 45, using: &rng), node: .random(in: 0...UInt32.max, using: &rng))
            #expect((a < b) == (a.description < b.description))
            #expect(SharedVersion(a.description) == a)
        }
        #expect(SharedVersion("zz") == nil)
        #expect(SharedVersion("00000000000000000000000g") == nil)
    }

    @Test func aLostHistoryDropsTheLocalCopies() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let a = try Self.node(dir, "a", tier: tier, id: 1)
        try await a.setValue("v1", forKey: "k")
        #expect(await Self.settle([a], tier))
        tier.restartEmpty()
        #expect(await eventually(5) { !a.contains("k") })
        try await a.close()
    }
}

/// A tier whose every call takes `delay` first (ignoring cancellation).
final class SlowTier: SharedTier {
    let base: InMemorySharedTier
    let delay: Duration
    init(base: InMemorySharedTier, delay: Duration) { self.base = base; self.delay = delay }
    func entry(forKey key: String) async throws -> SharedEntry? {
        try? await Task.detached { try await Task.sleep(for: self.delay) }.value
        return try await base.entry(forKey: key)
    }
    func apply(_ change: SharedChange) async throws {
        try? await Task.detached { try await Task.sleep(for: self.delay) }.value
        try await base.apply(change)
    }
    func changes(after cursor: String?) -> AsyncStream<SharedNotice> { base.changes(after: cursor) }
}

/// The synchronous read (from a non-async context).
func syncValue(_ cache: CaskCache, _ key: String) throws -> String? { try cache.value(String.self, forKey: key) }
