import CaskIntegrationTesting
import Foundation
import Testing
import Cask
@testable import CaskRedis

/// Nodes on one real redis-server: read-through, coherence, removals, restarts, outages.
@Suite struct RedisSharedTierTests {
    @Test func aColdNodeReadsThroughAndAWriteReachesTheOtherNode() async throws {
        let server = try RedisServer(), folder = try Folder()
        let ta = RedisSharedTier(server.configuration), tb = RedisSharedTier(server.configuration)
        let a = try node(folder, "a", ta, id: 1), b = try node(folder, "b", tb, id: 2)
        #expect(await waitLive(a)); #expect(await waitLive(b))
        try await a.setValue("v1", forKey: "k")
        #expect(try await eventually(5) { try await b.value(String.self, forKey: "k") == "v1" })
        // A local copy on b's disk (a read that overlapped a's change notice keeps none).
        #expect(try await eventually(5) { _ = try await b.value(String.self, forKey: "k"); return b.contains("k") })
        try await a.setValue("v2", forKey: "k")
        #expect(try await eventually(5) { !b.contains("k") })   // b's copy removed
        #expect(try await b.value(String.self, forKey: "k") == "v2")
        try await a.close(); try await b.close(); ta.close(); tb.close()
    }

    @Test func removalsByKeyPrefixAndTagReachTheOtherNodeAndSurviveItsRestart() async throws {
        let server = try RedisServer(), folder = try Folder()
        let ta = RedisSharedTier(server.configuration), tb = RedisSharedTier(server.configuration)
        let a = try node(folder, "a", ta, id: 1)
        var b = try node(folder, "b", tb, id: 2)
        #expect(await waitLive(a)); #expect(await waitLive(b))
        let tagged = CacheEntryOptions(timeToLive: .seconds(60), tags: ["team:7"])
        for key in ["user:1", "user:2", "doc:1", "keep"] { try await a.setValue(key, forKey: key) }
        _ = try await a.value(forKey: "t:1", as: String.self, options: tagged) { "tagged" }
        for key in ["user:1", "user:2", "doc:1", "keep"] {
            #expect(try await eventually(5) { try await b.value(String.self, forKey: key) == key })
        }
        #expect(try await b.value(forKey: "t:1", as: String.self, options: tagged) { "loaded on b" } == "tagged")
        try await a.removeValue(forKey: "doc:1")
        try await a.removeValues(withPrefix: "user:")
        try await a.removeValues(taggedWith: "team:7")
        for key in ["user:1", "user:2", "doc:1", "t:1"] {
            #expect(try await eventually(5) { !b.contains(key) }, "\(key) left on b's disk")
        }
        try await b.close()
        b = try node(folder, "b", tb, id: 2)                 // b restarted
        #expect(await waitLive(b))
        for key in ["user:1", "user:2", "doc:1", "t:1"] {
            #expect(try await b.value(String.self, forKey: key) == nil, "\(key) served after b's restart")
        }
        #expect(try await b.value(String.self, forKey: "keep") == "keep")
        try await a.setValue("new", forKey: "user:3")         // after the removal: kept
        #expect(try await eventually(5) { try await b.value(String.self, forKey: "user:3") == "new" })
        try await a.close(); try await b.close(); ta.close(); tb.close()
    }

    @Test func anOlderWriteNeverReplacesANewerOne() async throws {
        let server = try RedisServer()
        let tier = RedisSharedTier(server.configuration)
        func entry(_ text: String, _ ms: Int64, tags: [String] = []) -> SharedEntry {
            SharedEntry(value: Data(text.utf8), freshUntil: 0, expiry: 0, tags: tags, version: SharedVersion(microseconds: ms, node: 1))
        }
        try await tier.apply(.set(key: "k", entry: entry("new", 2_000)))
        try await tier.apply(.set(key: "k", entry: entry("old", 1_000)))
        #expect(try await tier.entry(forKey: "k")?.value == Data("new".utf8))
        try await tier.apply(.remove(key: "k", version: SharedVersion(microseconds: 1_500, node: 1)))
        #expect(try await tier.entry(forKey: "k")?.value == Data("new".utf8))   // the removal is older
        try await tier.apply(.remove(key: "k", version: SharedVersion(microseconds: 3_000, node: 1)))
        try await tier.apply(.set(key: "k", entry: entry("older", 2_500)))       // a queued write from before
        #expect(try await tier.entry(forKey: "k") == nil)
        try await tier.apply(.removeTag("t", version: SharedVersion(microseconds: 3_000, node: 1)))
        try await tier.apply(.set(key: "t1", entry: entry("x", 2_500, tags: ["t"])))
        #expect(try await tier.entry(forKey: "t1") == nil)
        try await tier.apply(.set(key: "t2", entry: entry("y", 3_500, tags: ["t"])))
        #expect(try await tier.entry(forKey: "t2")?.value == Data("y".utf8))
        tier.close()
    }

    @Test func foreignValuesUnderThePrefixAreMissesAndOpenNoBreaker() async throws {
        let server = try RedisServer(), folder = try Folder()
        let tier = RedisSharedTier(server.configuration)
        let a = try node(folder, "a", tier, id: 1)
        #expect(await waitLive(a))
        try server.cli("SET", "cask:v:plain", "a string")
        try server.cli("HSET", "cask:v:nofields", "ver", "000000000000000100000001", "val", "x")
        try server.cli("HSET", "cask:v:badtime", "ver", "000000000000000100000001", "val", "\"x\"", "fresh", "-9223372036854775808",
                       "exp", "99999999999999999", "tags", "[]")
        try server.cli("HSET", "cask:v:badver", "ver", "zz", "val", "\"x\"", "fresh", "0", "exp", "0", "tags", "[]")
        for key in ["plain", "nofields", "badtime", "badver"] {
            #expect(try await a.value(String.self, forKey: key) == nil, "\(key)")
        }
        #expect(a.sharedTierStatistics?.failures == 0)
        #expect(a.sharedTierStatistics?.misses == 4)
        try await a.close(); tier.close()
    }

    @Test func redisKilledAndRestartedEmptyCostsFreshnessOnly() async throws {
        let server = try RedisServer(), folder = try Folder()
        let ta = RedisSharedTier(server.configuration), tb = RedisSharedTier(server.configuration)
        let a = try node(folder, "a", ta, id: 1), b = try node(folder, "b", tb, id: 2)
        #expect(await waitLive(a)); #expect(await waitLive(b))
        try await a.setValue("before", forKey: "k")
        #expect(try await eventually(5) { try await b.value(String.self, forKey: "k") == "before" })
        server.kill()
        let start = ContinuousClock.now
        try await a.setValue("during", forKey: "k")            // acknowledged locally, queued
        #expect(try await a.value(String.self, forKey: "k") == "during")
        #expect(try await b.value(String.self, forKey: "other") == nil)   // a miss, not an error
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect((a.sharedTierStatistics?.changesWaiting ?? 0) >= 1)
        try server.start()                                       // empty: a new epoch
        // b learns its history is lost, drops its copies, and reads a's queued write.
        #expect(try await eventually(10) { try await b.value(String.self, forKey: "k") == "during" })
        #expect(await eventually(5) { a.sharedTierStatistics?.changesWaiting == 0 })
        try await a.close(); try await b.close(); ta.close(); tb.close()
    }

    @Test func theFollowerKilledAloneResumesWithoutLosingAChange() async throws {
        let server = try RedisServer(), folder = try Folder()
        let ta = RedisSharedTier(server.configuration), tb = RedisSharedTier(server.configuration)
        let a = try node(folder, "a", ta, id: 1), b = try node(folder, "b", tb, id: 2)
        #expect(await waitLive(a)); #expect(await waitLive(b))
        for i in 0..<20 { try await a.setValue("v\(i)", forKey: "k\(i)") }
        for i in 0..<20 { #expect(try await eventually(5) { try await b.value(String.self, forKey: "k\(i)") == "v\(i)" }) }
        try server.cli("CLIENT", "KILL", "TYPE", "normal")       // every connection, the followers' included
        for i in 0..<20 { try await a.setValue("w\(i)", forKey: "k\(i)") }
        for i in 0..<20 { #expect(try await eventually(10) { !b.contains("k\(i)") }, "k\(i) stale on b") }
        for i in 0..<20 { #expect(try await b.value(String.self, forKey: "k\(i)") == "w\(i)") }
        try await a.close(); try await b.close(); ta.close(); tb.close()
    }

    @Test func aPausedRedisNeverHoldsACallPastTheTimeout() async throws {
        let server = try RedisServer(), folder = try Folder()
        let ta = RedisSharedTier(server.configuration)
        let a = try node(folder, "a", ta, id: 1)
        #expect(await waitLive(a))
        try server.cli("CLIENT", "PAUSE", "3000", "ALL")
        let start = ContinuousClock.now
        try await a.setValue("v", forKey: "k")
        #expect(try await a.value(String.self, forKey: "absent") == nil)
        #expect(ContinuousClock.now - start < .milliseconds(2_000))
        #expect(try await eventually(10) { a.sharedTierStatistics?.changesWaiting == 0 })   // sent once unpaused
        try await a.close(); ta.close()
    }
}
