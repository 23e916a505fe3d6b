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
            let options = sharedTierOptions(tier, node: node)   // options.sharedTier = tier: the one line
            return CaskVaporCache(cache: try CaskCache(directory: folder.path + "/" + name, options: options),
                                  on: MultiThreadedEventLoopGroup.singleton.next())
        }
        let a = try cache("a", 1), b = try cache("b", 2)
        func settled() async -> Bool { await sharedTierSettled([a.cache, b.cache]) }
        try await a.set("session", to: "alice", expiresIn: .minutes(5)).get()
        #expect(await settled())
        #expect(try await b.get("session", as: String.self).get() == "alice")   // read through
        try await a.set("session", to: String?.none).get()                        // Vapor's delete
        #expect(await settled())
        #expect(await pollsUntil { !b.cache.contains("session") })
        #expect(try await b.get("session", as: String.self).get() == nil)
        try await a.cache.close(); try await b.cache.close()
    }
}
