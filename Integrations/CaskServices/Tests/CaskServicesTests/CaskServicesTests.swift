import Cask
import CaskServices
import CaskTesting
import CaskIntegrationTesting
import Foundation
import Logging
import MetricsTestKit
import ServiceLifecycle
import Testing

@Suite struct CaskServicesTests {
    func counter(_ metrics: TestMetrics, _ label: String, _ dimensions: [(String, String)] = []) throws -> Int64 {
        try metrics.expectCounter(label, [("cache", "test")] + dimensions).totalValue
    }

    func gauge(_ metrics: TestMetrics, _ label: String, _ dimensions: [(String, String)] = []) throws -> Double? {
        try metrics.expectGauge(label, [("cache", "test")] + dimensions).lastValue
    }

    /// Every counter grows by exactly what the statistics grew by between two reports, with
    /// the dimensions given at creation; gauges hold the values of the moment.
    @Test func reportsMatchTheStatisticsExactly() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        let factory = TestMetrics()
        var options = CacheOptions()
        options.disk.limits = StoreLimits(countLimit: 3)
        let cache = try CaskCache(directory: folder.path, options: options)
        let metrics = CaskMetrics(cache: cache, dimensions: [("cache", "test")], factory: factory)
        metrics.report()
        #expect(try counter(factory, "cask_hits_total", [("tier", "memory")]) == 0)
        for i in 0..<5 { try await cache.setValue(i, forKey: "k\(i)") }
        #expect(try await cache.value(Int.self, forKey: "k4") == 4)                    // memory hit
        #expect(try await cache.value(Int.self, forKey: "gone") == nil)                // miss in both
        _ = try await cache.value(forKey: "loaded", options: CacheEntryOptions(timeToLive: .seconds(60))) { 7 }
        metrics.report()
        let s = cache.statistics
        #expect(try counter(factory, "cask_hits_total", [("tier", "memory")]) == Int64(s.memoryHits))
        #expect(try counter(factory, "cask_misses_total", [("tier", "disk")]) == Int64(s.disk.misses))
        #expect(try counter(factory, "cask_evictions_total", [("cause", "count")]) == Int64(s.disk.evictionsByCount) && s.disk.evictionsByCount == 3)   // 6 puts, 3 kept
        #expect(try counter(factory, "cask_loads_total") == 1)
        #expect(try counter(factory, "cask_writes_total") == Int64(s.disk.writes))
        #expect(try gauge(factory, "cask_items", [("tier", "disk")]) == Double(s.disk.itemCount))
        #expect(try gauge(factory, "cask_bytes", [("kind", "live")]) == Double(s.disk.liveBytes))
        let hitsBefore = try counter(factory, "cask_hits_total", [("tier", "memory")])
        for _ in 0..<10 { _ = try await cache.value(Int.self, forKey: "k4") }
        metrics.report()
        metrics.report()   // nothing changed: nothing added
        #expect(try counter(factory, "cask_hits_total", [("tier", "memory")]) == hitsBefore + 10)
        try await cache.close()
    }

    /// A node with a shared tier reports its hits, misses, sends, notices and queue; counters
    /// carry Prometheus' `_total`, gauges do not.
    @Test func sharedTierMetricsFollowItsStatistics() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        let tier = InMemorySharedTier()
        func node(_ name: String, _ id: UInt32) throws -> CaskCache {
            try CaskCache(directory: folder.path + "/" + name, options: sharedTierOptions(tier, node: id))
        }
        let a = try node("a", 1), b = try node("b", 2)
        let factory = TestMetrics()
        let metrics = CaskMetrics(cache: b, dimensions: [("cache", "test")], factory: factory)
        try await a.setValue("v", forKey: "k")
        #expect(await sharedTierSettled([a, b]) && a.sharedTierStatistics?.changesSent == 1)
        #expect(try await b.value(String.self, forKey: "k") == "v")        // through the tier
        #expect(try await b.value(String.self, forKey: "absent") == nil)   // missed there too
        metrics.report()
        let t = try #require(b.sharedTierStatistics)
        #expect(t.hits == 1 && t.misses == 1)
        #expect(try counter(factory, "cask_hits_total", [("tier", "shared")]) == 1)
        #expect(try counter(factory, "cask_misses_total", [("tier", "shared")]) == 1)
        #expect(try counter(factory, "cask_shared_tier_failures_total") == Int64(t.failures))
        #expect(try gauge(factory, "cask_shared_tier_following") == 1)
        #expect(try gauge(factory, "cask_shared_tier_changes_waiting") == 0)
        tier.isDown = true
        try await b.setValue("w", forKey: "q")                  // queued: the tier is down
        metrics.report()
        #expect(try gauge(factory, "cask_shared_tier_changes_waiting") == Double(b.sharedTierStatistics?.changesWaiting ?? -1))
        #expect(try gauge(factory, "cask_shared_tier_changes_waiting") ?? 0 >= 1)
        tier.isDown = false
        #expect(await pollsUntil { b.sharedTierStatistics?.changesWaiting == 0 })
        metrics.report()
        #expect(try counter(factory, "cask_shared_tier_changes_sent_total") == 1)
        #expect(try gauge(factory, "cask_shared_tier_changes_waiting") == 0)
        try await a.close(); try await b.close()
    }

    /// The timers get one value per load (by result), per sync (file or directory) and per
    /// compaction pass, as the work happens, with no report() call; and none once the metrics
    /// are released.
    @Test func timersRecordEachLoadSyncAndCompaction() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        let factory = TestMetrics()
        var options = CacheOptions()
        options.disk.durability = .everyWrite
        options.disk.segmentSize = 4096
        let cache = try CaskCache(directory: folder.path, options: options)
        var metrics: CaskMetrics? = CaskMetrics(cache: cache, dimensions: [("cache", "test")], factory: factory)
        let syncsBefore = cache.statistics.disk.segmentSyncs
        for i in 0..<60 { try await cache.setData(Data(repeating: 1, count: 200), forKey: "k\(i % 6)") }
        let fresh = CacheEntryOptions(timeToLive: .seconds(60))
        _ = try await cache.value(forKey: "loaded", options: fresh) { () async throws -> Int in
            try await Task.sleep(for: .milliseconds(10))
            return 7
        }
        struct Upstream: Error {}
        _ = try? await cache.value(forKey: "failing", as: Int.self, options: fresh) { throw Upstream() }
        _ = try await cache.compact()
        func timer(_ label: String, _ dimensions: [(String, String)] = []) throws -> [Int64] {
            try factory.expectTimer(label, [("cache", "test")] + dimensions).values
        }
        let loads = try timer("cask_load_duration_seconds", [("result", "success")])
        #expect(loads.count == 1 && loads[0] >= 10_000_000, "nanoseconds: \(loads)")
        #expect(try timer("cask_load_duration_seconds", [("result", "failure")]).count == 1)
        let fileSyncs = try timer("cask_sync_duration_seconds", [("target", "file")])
        #expect(fileSyncs.count >= cache.statistics.disk.segmentSyncs - syncsBefore, "every segment sync, and the hint files' too")
        #expect(try timer("cask_sync_duration_seconds", [("target", "directory")]).count >= 1)
        #expect(try timer("cask_compaction_duration_seconds").count >= 1)
        metrics = nil
        try await cache.setData(Data("after".utf8), forKey: "after")
        #expect(try timer("cask_sync_duration_seconds", [("target", "file")]).count == fileSyncs.count, "released metrics record nothing")
        withExtendedLifetime(metrics) {}
        try await cache.close()
    }

    /// In a ServiceGroup: metrics are reported while the service runs, and graceful shutdown
    /// closes the cache (later calls throw `closed`; the folder opens again at once).
    @Test func aServiceGroupReportsMetricsAndClosesTheCacheOnShutdown() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        let factory = TestMetrics()
        let cache = try CaskCache(directory: folder.path)
        let service = CaskCacheService(cache: cache, metrics: CaskMetrics(cache: cache, dimensions: [("cache", "test")], factory: factory),
                                       metricsInterval: .milliseconds(20))
        let group = ServiceGroup(services: [service], gracefulShutdownSignals: [], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await cache.setValue("v", forKey: "k")
            var reported = false
            for _ in 0..<250 where !reported {   // up to 5 s
                try await Task.sleep(for: .milliseconds(20))
                reported = (try? counter(factory, "cask_writes_total")) == 1
            }
            #expect(reported, "the running service reported the write")
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(throws: CaskError.closed) { try cache.setValue("w", forKey: "k") }
        let again = try CaskCache(directory: folder.path)
        #expect(try await again.value(String.self, forKey: "k") == "v")
        try await again.close()
    }

    /// A store used without the facade: graceful shutdown closes it (later calls throw
    /// `closed`; the index snapshot is written, so the next open loads it).
    @Test func aDiskStoreServiceClosesTheStoreOnShutdown() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        let store = try DiskStore(directory: folder.path)
        try store.setValue(Data("v".utf8), forKey: "k")
        let group = ServiceGroup(services: [DiskStoreService(store: store)], gracefulShutdownSignals: [], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await Task.sleep(for: .milliseconds(50))
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(throws: CaskError.closed) { try store.setValue(Data("w".utf8), forKey: "k") }
        let again = try DiskStore(directory: folder.path)
        #expect(again.statistics.indexLoadedFromSnapshot, "closed cleanly: the snapshot was written")
        #expect(try again.value(forKey: "k") == Data("v".utf8))
        try again.close()
    }

    /// Without metrics, the service only waits for shutdown and closes the cache.
    @Test func aServiceWithoutMetricsClosesTheCache() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        let cache = try CaskCache(directory: folder.path)
        let group = ServiceGroup(services: [CaskCacheService(cache: cache)], gracefulShutdownSignals: [], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await Task.sleep(for: .milliseconds(50))
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(throws: CaskError.closed) { try cache.setValue("w", forKey: "k") }
    }
}
