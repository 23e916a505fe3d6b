import Cask
import CaskHummingbird
import CaskIntegrationTesting
import CaskTesting
import Testing

/// Two persist drivers (two instances of a service) on one shared tier, given in one line of
/// options: a value set through one is read through the other, and a removal through one
/// reaches the other's local copy.
@Suite struct SharedTierDriverTests {
    @Test func twoDriversOnOneSharedTierSeeEachOthersChanges() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        let tier = InMemorySharedTier()
        func driver(_ name: String, _ node: UInt32) throws -> CaskPersistDriver {
            let options = sharedTierOptions(tier, node: node)   // options.sharedTier = tier: the one line
            return try CaskPersistDriver(directory: folder.path + "/" + name, options: options)
        }
        let a = try driver("a", 1), b = try driver("b", 2)
        func settled() async -> Bool { await sharedTierSettled([a.cache, b.cache]) }
        try await a.set(key: "session", value: "alice", expires: .seconds(60))
        #expect(await settled())
        #expect(try await b.get(key: "session", as: String.self) == "alice")   // read through, kept
        #expect(b.cache.contains("session"))                   // a local copy now
        let ttl = try #require(try await b.getWithTTL(key: "session", as: String.self)?.ttl)
        #expect(ttl > .seconds(50) && ttl <= .seconds(60))                   // the expiry came along
        try await a.remove(key: "session")
        #expect(await settled())
        #expect(await pollsUntil { !b.cache.contains("session") })          // b's copy removed
        #expect(try await b.get(key: "session", as: String.self) == nil)
        try await a.shutdown(); try await b.shutdown()
    }
}
