import CaskIntegrationTesting
import Foundation
import Synchronization
import Testing
import Cask
@testable import CaskRedis

/// One load per key across nodes on a real redis-server (`CacheOptions.sharedTierLoadLease`),
/// and the claim's contract: tokens that only grow, a release that needs the token, a lease
/// that ends a dead holder's claim, a foreign key replaced.
@Suite struct RedisLoadClaimTests {
    final class Runs: Sendable {
        let count = Atomic<Int>(0)
    }

    @Test func threeNodesLoadAKeyOnce() async throws {
        let server = try RedisServer(), folder = try Folder()
        let tiers = (1...3).map { _ in RedisSharedTier(server.configuration) }
        let nodes = try (0..<3).map { try node(folder, "n\($0)", tiers[$0], id: UInt32($0 + 1), loadLease: .seconds(10)) }
        for n in nodes { #expect(await waitLive(n)) }
        let runs = Runs()
        let entry = CacheEntryOptions(timeToLive: .seconds(60))
        let values = try await withThrowingTaskGroup(of: String.self) { group in
            for (i, n) in nodes.enumerated() {
                group.addTask {
                    try await n.value(forKey: "user:1", as: String.self, options: entry) {
                        runs.count.add(1, ordering: .relaxed)
                        try await Task.sleep(for: .milliseconds(300))
                        return "loaded by n\(i)"
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(runs.count.load(ordering: .relaxed) == 1)
        #expect(Set(values).count == 1, "\(values)")
        #expect(nodes.map { $0.sharedTierStatistics?.loadsFromOtherNodes ?? 0 }.reduce(0, +) == 2)
        #expect(try await eventually(5) { try server.cli("EXISTS", "cask:load:user:1") == "0" }, "the claim is released")
        for n in nodes { try await n.close() }
        for t in tiers { t.close() }
    }

    @Test func theClaimsContract() async throws {
        let server = try RedisServer()
        let tier = RedisSharedTier(server.configuration)
        let first = try #require(try await tier.claimLoad(of: "k", for: .seconds(10)))
        #expect(try await tier.claimLoad(of: "k", for: .seconds(10)) == nil, "held")
        try await tier.releaseLoad(of: "k", token: first + 100)            // not its token
        #expect(try await tier.claimLoad(of: "k", for: .seconds(10)) == nil, "a wrong token releases nothing")
        try await tier.releaseLoad(of: "k", token: first)
        let second = try #require(try await tier.claimLoad(of: "k", for: .milliseconds(200)))
        #expect(second > first, "tokens only grow")
        try await Task.sleep(for: .milliseconds(400))                      // the holder died
        let third = try #require(try await tier.claimLoad(of: "k", for: .seconds(10)), "the lease ended the claim")
        try await tier.releaseLoad(of: "k", token: second)                   // the late holder
        #expect(try await tier.claimLoad(of: "k", for: .seconds(10)) == nil, "a late holder cannot release a later claim")
        try server.cli("DEL", "cask:load-tokens")                           // the counter lost (a restart empty)
        let fourth = try #require(try await tier.claimLoad(of: "other", for: .seconds(10)))
        #expect(fourth > third, "tokens grow even after the counter is lost")
        for foreign in ["abc", "-5", "0", "1e300"] {                      // a counter that is not one
            try server.cli("SET", "cask:load-tokens", foreign)
            let token = try #require(try await tier.claimLoad(of: "f-\(foreign)", for: .seconds(10)), "counter \(foreign)")
            #expect(token > fourth)
        }
        try server.cli("SET", "cask:load:foreign", "not a claim")           // no time to live
        #expect(try await tier.claimLoad(of: "foreign", for: .seconds(10)) != nil, "a foreign key is replaced")
        try server.cli("HSET", "cask:load:hash", "f", "v")
        try await tier.releaseLoad(of: "hash", token: 1)                      // not a string: left alone
        #expect(try server.cli("TYPE", "cask:load:hash") == "hash")
        tier.close()
    }

    /// A claim whose holder died (taken here, never released): a node waits for its lease,
    /// then loads itself.
    @Test func aDeadHoldersClaimEndsWithItsLease() async throws {
        let server = try RedisServer(), folder = try Folder()
        let tier = RedisSharedTier(server.configuration), dead = RedisSharedTier(server.configuration)
        let a = try node(folder, "a", tier, id: 1, loadLease: .seconds(10))
        #expect(await waitLive(a))
        #expect(try await dead.claimLoad(of: "k", for: .milliseconds(500)) != nil)
        dead.close()
        let started = ContinuousClock.now
        let value = try await a.value(forKey: "k", as: String.self, options: CacheEntryOptions(timeToLive: .seconds(60))) { "mine" }
        #expect(value == "mine")
        #expect(ContinuousClock.now - started >= .milliseconds(400))
        try await a.close(); tier.close()
    }
}
