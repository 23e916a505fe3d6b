import Foundation
import Testing
@testable import Cask
import CaskTesting

/// Nodes (caches in their own folders) sharing one ``InMemorySharedTier``: read-through,
/// coherence of local copies, removals by key, prefix and tag, outages, versions.
@Suite struct SharedTierTests {
    /// A node of a test cluster. The timeout is ten minutes by default: under the whole suite's
    /// load Swift's pool can be busy for tens of seconds (a read's task waits that long while
    /// the deadline's Dispatch timer runs), and a call past its timeout is an outage, after which
    /// a read misses and a load runs without a claim (the tests of timeouts pass a short one).
    static func node(_ dir: TemporaryDirectory, _ name: String, tier: any SharedTier, id: UInt32,
                     timeout: Duration = .seconds(600), retry: Duration = .milliseconds(20),
                     loadLease: Duration? = nil) throws -> CaskCache {
        var o = CacheOptions()
        o.disk = options()
        o.sharedTier = tier
        o.sharedTierNode = id
        o.sharedTierTimeout = timeout
        o.sharedTierRetryDelay = retry
        o.sharedTierLoadLease = loadLease
        return try CaskCache(directory: dir.file(name), options: o)
    }

    /// Waits until every node sent its changes and followed the tier to its last one.
    static func settle(_ nodes: [CaskCache], _ tier: InMemorySharedTier) async -> Bool {
        await eventually(within: 120) {
            let cursor = tier.currentCursor
            return nodes.allSatisfy { node in
                node.sharedTierStatistics?.changesWaiting == 0 && node.sharedTierCursor == cursor
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
        // Each read would take 30 s: it is answered (a miss) at the timeout, and once the
        // breaker is open the tier is not even asked. (How long it took is not asserted here,
        // where the whole suite shares Swift's pool; CaskRedis' tests bound it.)
        #expect(await eventually(within: 120) { a.sharedTierStatistics?.isFollowing == true })   // reads go through from here
        #expect(try await a.value(String.self, forKey: "x") == nil)
        #expect(a.sharedTierStatistics?.failures == 1)
        #expect(try await a.value(String.self, forKey: "y") == nil)
        #expect(a.sharedTierStatistics?.failures == 1)               // the breaker is open: not tried
        #expect(a.sharedTierStatistics?.misses == 0)
        try await a.close()
    }

    @Test func anOlderWriteNeverReplacesANewerOne() async throws {
        let tier = InMemorySharedTier()
        let new = SharedEntry(value: Data("new".utf8), freshUntil: 0, expiry: 0, tags: [], version: SharedVersion(microseconds: 2_000, node: 1))
        let old = SharedEntry(value: Data("old".utf8), freshUntil: 0, expiry: 0, tags: [], version: SharedVersion(microseconds: 1_000, node: 9))
        try await tier.apply(.set(key: "k", entry: new))
        try await tier.apply(.set(key: "k", entry: old))
        #expect(try await tier.entry(forKey: "k")?.value == Data("new".utf8))
        try await tier.apply(.removePrefix("k", version: SharedVersion(microseconds: 1_500, node: 1)))
        #expect(try await tier.entry(forKey: "k")?.value == Data("new".utf8))   // written after the removal
        try await tier.apply(.removeTag("t", version: SharedVersion(microseconds: 3_000, node: 1)))
        try await tier.apply(.set(key: "t1", entry: SharedEntry(value: Data(), freshUntil: 0, expiry: 0, tags: ["t"], version: SharedVersion(microseconds: 2_500, node: 2))))
        #expect(try await tier.entry(forKey: "t1") == nil)                        // an older write the tag removal covers
    }

    @Test func versionsOrderAsTheirText() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<1000 {
            let a = SharedVersion(microseconds: Int64.random(in: 0...1 << 45, using: &rng), node: .random(in: 0...UInt32.max, using: &rng))
            let b = SharedVersion(microseconds: Int64.random(in: 0...1 << 45, using: &rng), node: .random(in: 0...UInt32.max, using: &rng))
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
        #expect(await eventually(within: 5) { !a.contains("k") })
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

/// The outbox on disk: what a node queued during an outage survives its restart, and the
/// record format decodes exactly what it encoded and nothing else.
@Suite struct SharedOutboxTests {
    @Test func changesQueuedDuringAnOutageSurviveARestart() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        tier.isDown = true
        var a = try SharedTierTests.node(dir, "a", tier: tier, id: 1)
        for i in 0..<5 { try await a.setValue("v\(i)", forKey: "k\(i)") }
        try await a.removeValue(forKey: "k2")
        try await a.removeValues(withPrefix: "gone:")
        try await a.close()
        #expect(tier.appliedChanges.isEmpty)
        tier.isDown = false
        a = try SharedTierTests.node(dir, "a", tier: tier, id: 1)         // queues its outbox again
        let b = try SharedTierTests.node(dir, "b", tier: tier, id: 2)
        #expect(await SharedTierTests.settle([a, b], tier))
        #expect(tier.appliedChanges.count == 7)
        for i in 0..<5 { #expect(try await b.value(String.self, forKey: "k\(i)") == (i == 2 ? nil : "v\(i)")) }
        try await a.close(); try await b.close()
    }

    @Test func aRefusedChangeIsDroppedAndTheRestGoOn() async throws {
        let dir = try TemporaryDirectory()
        let tier = RefusingTier(base: InMemorySharedTier(), refusing: "bad")
        let a = try SharedTierTests.node(dir, "a", tier: tier, id: 1)
        try await a.setValue("x", forKey: "bad")
        try await a.setValue("y", forKey: "good")
        #expect(await eventually(within: 120) { a.sharedTierStatistics?.changesWaiting == 0 })
        #expect(a.sharedTierStatistics?.changesRefused == 1)
        #expect(try await tier.base.entry(forKey: "good")?.value == Data("\"y\"".utf8))
        try await a.close()
    }

    @Test func theRecordFormatDecodesWhatItEncodedAndNothingElse() {
        var rng = SeededBytes(seed: 44)
        let v = SharedVersion(microseconds: 1_700_000_000_123, node: 7)
        let changes: [SharedChange] = [
            .set(key: "k", entry: SharedEntry(value: rng.random(100), freshUntil: 5, expiry: 9, tags: ["a", "ü"], version: v)),
            .set(key: "", entry: SharedEntry(value: Data(), freshUntil: 0, expiry: 0, tags: [], version: v)),
            .remove(key: "key", version: v), .removePrefix("", version: v), .removeTag("t", version: v),
        ]
        for change in changes {
            let bytes = SharedChangeCodec.encode(change)
            #expect(SharedChangeCodec.decode(bytes) == change)
            #expect(SharedChangeCodec.decode(bytes + [0]) == nil)           // bytes left over
            for cut in 0..<bytes.count { #expect(SharedChangeCodec.decode(bytes.prefix(cut)) == nil) }
        }
        for _ in 0..<20_000 {                                                // mutated: never traps
            var bytes = SharedChangeCodec.encode(changes[Int(rng.next() % 5)])
            for _ in 0..<3 { bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            _ = SharedChangeCodec.decode(bytes)
        }
        var huge = SharedChangeCodec.encode(.remove(key: "k", version: v))
        huge.replaceSubrange(14..<18, with: [0xFF, 0xFF, 0xFF, 0xFF])           // a length far past the end
        #expect(SharedChangeCodec.decode(huge) == nil)
    }
}

/// A tier that refuses every change of one key for good.
final class RefusingTier: SharedTier {
    let base: InMemorySharedTier
    let refusing: String
    init(base: InMemorySharedTier, refusing: String) { self.base = base; self.refusing = refusing }
    func entry(forKey key: String) async throws -> SharedEntry? { try await base.entry(forKey: key) }
    func apply(_ change: SharedChange) async throws {
        if case .set(refusing, _) = change { throw SharedTierRefusal(reason: "too large") }
        try await base.apply(change)
    }
    func changes(after cursor: String?) -> AsyncStream<SharedNotice> { base.changes(after: cursor) }
}

/// The outbox folder is never followed through a link.
@Suite struct SharedOutboxLinkTests {
    @Test func anOutboxThatIsALinkIsRefusedNamingIt() throws {
        let dir = try TemporaryDirectory()
        let elsewhere = dir.file("elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try CaskCache(directory: dir.file("a"), options: { var o = CacheOptions(); o.disk = options(); return o }()).close()
        try FileManager.default.createSymbolicLink(atPath: dir.file("a/shared-outbox"), withDestinationPath: elsewhere)
        #expect {
            _ = try SharedTierTests.node(dir, "a", tier: InMemorySharedTier(), id: 1)
        } throws: { error in
            guard case .foreignFile(let path, _) = error as? CaskError else { return false }
            return path.hasSuffix("shared-outbox")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)   // nothing written there
    }
}

/// What other processes write is never trusted: far-future versions, absurd times, forged
/// outbox records.
@Suite struct SharedTierHostileInputTests {
    @Test func aVersionFarInTheFutureIsNotFollowed() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let a = try SharedTierTests.node(dir, "a", tier: tier, id: 1)
        #expect(await SharedTierTests.settle([a], tier))
        try await tier.apply(.remove(key: "x", version: SharedVersion(microseconds: .max, node: 99)))
        #expect(await SharedTierTests.settle([a], tier))
        try await a.setValue("v", forKey: "k")                         // no overflow
        #expect(await SharedTierTests.settle([a], tier))
        let last = try #require(tier.appliedChanges.last)
        #expect(last.version.node == 1 && last.version.microseconds < WallClock.system.now * 1000 + 3_600_000_000)
        try await a.close()
    }

    @Test func absurdTimesFromTheTierNeitherTrapNorStay() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let a = try SharedTierTests.node(dir, "a", tier: tier, id: 1)
        #expect(await SharedTierTests.settle([a], tier))
        let entry = SharedEntry(value: Data("\"bad\"".utf8), freshUntil: .min, expiry: .max, tags: [], version: SharedVersion(microseconds: 1, node: 9))
        try await tier.apply(.set(key: "k", entry: entry))
        #expect(await SharedTierTests.settle([a], tier))
        let loaded = try await a.value(forKey: "k", as: String.self, options: CacheEntryOptions(timeToLive: .seconds(60))) { "fresh" }
        #expect(loaded == "bad" || loaded == "fresh")
        try await a.close()
    }

    @Test func forgedOutboxRecordsAreDroppedNotTrusted() async throws {
        let dir = try TemporaryDirectory()
        try await CaskCache(directory: dir.file("a"), options: { var o = CacheOptions(); o.disk = options(); return o }()).close()
        let outbox = try DiskStore(directory: dir.file("a/shared-outbox"), options: options())
        let change = SharedChangeCodec.encode(.remove(key: "k", version: SharedVersion(microseconds: 5, node: 1)))
        for key in ["18446744073709551615", "+0000000000000000001", "0000000000000000001x", "1", "00000000000000000002"] {
            try outbox.setValue(key == "00000000000000000002" ? Data([1, 2, 3]) : change, forKey: key)
        }
        try outbox.close()
        let tier = InMemorySharedTier()
        let a = try SharedTierTests.node(dir, "a", tier: tier, id: 1)   // no trap
        #expect(await SharedTierTests.settle([a], tier))
        #expect(tier.appliedChanges.isEmpty)                            // none of them was sent
        try await a.close()
        let reopened = try DiskStore(directory: dir.file("a/shared-outbox"), options: options())
        #expect(reopened.keys().isEmpty)                                // and all were removed
        try reopened.close()
    }
}
