import Cask
import CaskIntegrationTesting
import CaskTesting
import CaskVapor
import Testing
import VaporTesting

/// Two Vapor caches (two instances of a service) given one shared tier in one line of options:
/// a value set through one is read through the other, and a removal reaches the other's copy.
@Suite struct SharedTierVaporTests {
    @Test func twoAppsCachesOnOneSharedTierSeeEachOthersChanges() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        let tier = InMemorySharedTier()
        func cache(_ name: String, _ node: UInt32) throws -> CaskVaporCache {
            var options = CacheOptions()
            options.sharedTier = tier                 // the one line
            options.sharedTierNode = node
            options.sharedTierTimeout = .seconds(30)  // the test process's pool may be busy
            return CaskVaporCache(cache: try CaskCache(directory: folder.path + "/" + name, options: options),
                                  on: MultiThreadedEventLoopGroup.singleton.next())
        }
        let a = try cache("a", 1), b = try cache("b", 2)
        func settled() async throws -> Bool {
            for _ in 0..<24_000 {
                let s = [a.cache.sharedTierStatistics, b.cache.sharedTierStatistics]
                if s.allSatisfy({ $0?.changesWaiting == 0 && $0?.isFollowing == true }) { return true }
                try await Task.sleep(for: .milliseconds(5))
            }
            return false
        }
        try await a.set("session", to: "alice", expiresIn: .minutes(5)).get()
        #expect(try await settled())
        #expect(try await b.get("session", as: String.self).get() == "alice")   // read through
        try await a.set("session", to: String?.none).get()                        // Vapor's delete
        #expect(try await settled())
        var polls = 0
        while b.cache.contains("session"), polls < 24_000 { polls += 1; try await Task.sleep(for: .milliseconds(5)) }
        #expect(try await b.get("session", as: String.self).get() == nil)
        try await a.cache.close(); try await b.cache.close()
    }
}
