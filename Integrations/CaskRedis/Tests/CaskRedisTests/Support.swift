import CaskIntegrationTesting
import Foundation
import Testing
import Cask
@testable import CaskRedis

/// A temporary folder, removed when the test ends.
final class Folder: Sendable {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "cask-redis-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func file(_ name: String) -> String { path + "/" + name }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The test server's configuration for the tier.
extension RedisServer {
    var configuration: RedisConfiguration {
        var c = RedisConfiguration(host: "127.0.0.1", port: port)
        c.commandTimeout = .milliseconds(500)
        return c
    }
}

/// Polls `condition` without blocking a thread of Swift's pool; whether it held in time.
func eventually(_ seconds: Double, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try await condition()
}

/// A cache node on `server`, in its own folder.
func node(_ folder: Folder, _ name: String, _ tier: RedisSharedTier, id: UInt32, loadLease: Duration? = nil) throws -> CaskCache {
    var o = CacheOptions()
    o.sharedTier = tier
    o.sharedTierNode = id
    o.sharedTierTimeout = .milliseconds(300)
    o.sharedTierRetryDelay = .milliseconds(50)
    o.sharedTierLoadLease = loadLease
    return try CaskCache(directory: folder.file(name), options: o)
}

/// Waits until `cache` follows the tier live (it then reads through it).
func waitLive(_ cache: CaskCache) async -> Bool {
    await eventually(10) { cache.sharedTierStatistics?.isFollowing == true }
}

/// A seeded generator (SplitMix64) for the randomized tests.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
