import Foundation
import Testing
@testable import Cask
import CaskTesting

/// One load per key across the nodes of a shared tier (``CacheOptions/sharedTierLoadLease``):
/// one node loads, the others get its value; a failed or dead holder does not leave them
/// without one; without a lease, or with the tier down, every node loads for itself.
@Suite struct SharedLoadTests {
    static let entry = CacheEntryOptions(timeToLive: .seconds(60))
    /// The nodes' lease: ten minutes, longer than the suite runs, so that a holder whose task
    /// the busy pool holds up does not lose its claim (the dead-holder tests take short claims
    /// of their own).
    static let lease = Duration.seconds(600)

    /// Three nodes on one tier, each with a lease (`nil`: none).
    static func cluster(_ dir: TemporaryDirectory, _ tier: InMemorySharedTier, lease: Duration?) async throws -> [CaskCache] {
        let nodes = try (1...3).map { try SharedTierTests.node(dir, "n\($0)", tier: tier, id: UInt32($0), loadLease: lease) }
        #expect(await SharedTierTests.settle(nodes, tier))
        #expect(await eventually(within: 120) { nodes.allSatisfy { $0.sharedTierStatistics?.isFollowing == true } })
        return nodes
    }

    /// Every node asks for `key` at once; the loader takes `loadTime` and counts its runs.
    static func loadEverywhere(_ nodes: [CaskCache], _ key: String, runs: Counter,
                               loadTime: Duration = .milliseconds(300)) async throws -> [String] {
        try await withThrowingTaskGroup(of: String.self) { group in
            for (i, node) in nodes.enumerated() {
                group.addTask {
                    try await node.value(forKey: key, as: String.self, options: Self.entry) {
                        runs.increment()
                        try await Task.sleep(for: loadTime)
                        return "loaded by n\(i + 1)"
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test func oneNodeLoadsAndTheOthersGetItsValue() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let nodes = try await Self.cluster(dir, tier, lease: Self.lease)
        let runs = Counter()
        let values = try await Self.loadEverywhere(nodes, "user:1", runs: runs)
        #expect(runs.value == 1, "one load across three nodes")
        #expect(Set(values).count == 1, "every node answers the one loaded value: \(values)")
        #expect(nodes.map { $0.sharedTierStatistics?.loadsFromOtherNodes ?? 0 }.reduce(0, +) == 2)
        // A waiter keeps no copy when the holder's change notice arrived while it read (it
        // may be older than that change); asked again, each node answers without a load.
        let again = try await Self.loadEverywhere(nodes, "user:1", runs: runs)
        #expect(runs.value == 1 && again == values)
        #expect(await SharedTierTests.settle(nodes, tier))
        #expect(await eventually(within: 120) { !tier.isLoadClaimed("user:1") }, "the claim is released once the value is sent")
        for node in nodes { try await node.close() }
    }

    @Test func withoutALeaseEveryNodeLoads() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let nodes = try await Self.cluster(dir, tier, lease: nil)
        let runs = Counter()
        _ = try await Self.loadEverywhere(nodes, "user:1", runs: runs)
        #expect(runs.value == 3)
        for node in nodes { try await node.close() }
    }

    /// A holder that claimed and died (its claim taken here and never released): the node
    /// waits for the lease, then loads itself.
    @Test func aDeadHoldersClaimEndsWithItsLease() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let nodes = try await Self.cluster(dir, tier, lease: Self.lease)
        #expect(try await tier.claimLoad(of: "user:1", for: .milliseconds(400)) != nil)
        let runs = Counter()
        let started = ContinuousClock.now
        let value = try await nodes[0].value(forKey: "user:1", as: String.self, options: Self.entry) {
            runs.increment(); return "mine"
        }
        #expect(value == "mine" && runs.value == 1)
        #expect(ContinuousClock.now - started >= .milliseconds(400), "it waited for the dead holder's lease")
        for node in nodes { try await node.close() }
    }

    /// The holder's loader fails: it releases the claim, and a waiting node loads.
    @Test func aFailedLoadLetsAWaiterLoad() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let nodes = try await Self.cluster(dir, tier, lease: Self.lease)
        struct Upstream: Error {}
        let holderStarted = Counter()
        let holder = Task {
            try await nodes[0].value(forKey: "k", as: String.self, options: Self.entry) { () async throws -> String in
                holderStarted.increment()
                try await Task.sleep(for: .milliseconds(300))
                throw Upstream()
            }
        }
        #expect(await eventually(within: 120) { holderStarted.value == 1 })
        let started = ContinuousClock.now
        let value = try await nodes[1].value(forKey: "k", as: String.self, options: Self.entry) { "second" }
        #expect(value == "second")
        #expect(ContinuousClock.now - started < .seconds(30), "it did not wait for the lease")
        await #expect(throws: CacheLoadError.self) { try await holder.value }
        for node in nodes { try await node.close() }
    }

    /// The tier down: the claim cannot be asked, so each node loads for itself at once.
    @Test func anOutageLoadsLocally() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let nodes = try await Self.cluster(dir, tier, lease: Self.lease)
        tier.isDown = true
        let runs = Counter()
        let values = try await Self.loadEverywhere(nodes, "k", runs: runs, loadTime: Duration.zero)
        #expect(runs.value == 3 && values.count == 3)
        tier.isDown = false
        for node in nodes { try await node.close() }
    }

    /// An eager refresh, and a refresh of a stale value, run the loader with a lease too: the
    /// value the tier holds is the one being replaced, not an answer.
    @Test func refreshesStillLoad() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let nodes = try await Self.cluster(dir, tier, lease: Self.lease)
        let eager = CacheEntryOptions(timeToLive: .seconds(2), staleWindow: .seconds(60), eagerRefresh: 0.25)
        #expect(try await nodes[0].value(forKey: "k", as: String.self, options: eager) { "v1" } == "v1")
        #expect(await SharedTierTests.settle(nodes, tier))
        try await Task.sleep(for: .milliseconds(700))                           // in the eager window
        #expect(try await nodes[0].value(forKey: "k", as: String.self, options: eager) { "v2" } == "v1")
        #expect(await eventually(within: 120) { (try? await nodes[0].value(String.self, forKey: "k")) == "v2" }, "the eager refresh loaded")
        #expect(await SharedTierTests.settle(nodes, tier))
        try await Task.sleep(for: .milliseconds(2_100))                         // stale now
        let stale = CacheEntryOptions(timeToLive: .seconds(2), staleWindow: .seconds(60), softTimeout: .seconds(60))
        #expect(try await nodes[1].value(forKey: "k", as: String.self, options: stale) { "v3" } == "v3", "the stale value was refreshed")
        for node in nodes { try await node.close() }
    }

    /// A release that fails (the tier down) is retried, so an outage leaves no claim behind to
    /// hold up the key's loads for the whole lease.
    @Test func aFailedReleaseIsRetried() async throws {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let nodes = try await Self.cluster(dir, tier, lease: Self.lease)
        let token = try #require(try await tier.claimLoad(of: "k", for: Self.lease))
        tier.isDown = true
        try #require(nodes[0].shared).releaseWhenSent("k", token: token)   // fails: the tier is down
        try await Task.sleep(for: .milliseconds(100))
        #expect(tier.isLoadClaimed("k"))
        tier.isDown = false
        #expect(await eventually(within: 120) { !tier.isLoadClaimed("k") }, "the release was retried")
        for node in nodes { try await node.close() }
    }
}
