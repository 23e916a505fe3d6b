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
            var options = CacheOptions()
            options.sharedTier = tier                 // the one line
            options.sharedTierNode = node
            options.sharedTierTimeout = .seconds(30)  // the test process's pool may be busy
            return try CaskPersistDriver(directory: folder.path + "/" + name, options: options)
        }
        let a = try driver("a", 1), b = try driver("b", 2)
        /// Until both nodes sent what they queued and follow the tier's changes.
        func settled() async throws -> Bool {
            var polls = 0
            while polls < 24_000 {
                let s = [a.cache.sharedTierStatistics, b.cache.sharedTierStatistics]
                if s.allSatisfy({ $0?.changesWaiting == 0 && $0?.isFollowing == true }) { return true }
                polls += 1
                try await Task.sleep(for: .milliseconds(5))
            }
            return false
        }
        try await a.set(key: "session", value: "alice", expires: .seconds(60))
        #expect(try await settled())
        #expect(try await b.get(key: "session", as: String.self) == "alice")   // read through, kept
        #expect(b.cache.contains("session"))                   // a local copy now
        let ttl = try #require(try await b.getWithTTL(key: "session", as: String.self)?.ttl)
        #expect(ttl > .seconds(50) && ttl <= .seconds(60))                   // the expiry came along
        try await a.remove(key: "session")
        #expect(try await settled())
        var polls = 0
        while b.cache.contains("session"), polls < 24_000 { polls += 1; try await Task.sleep(for: .milliseconds(5)) }
        #expect(!b.cache.contains("session"))                   // b's copy removed
        #expect(try await b.get(key: "session", as: String.self) == nil)
        try await a.shutdown(); try await b.shutdown()
    }
}
