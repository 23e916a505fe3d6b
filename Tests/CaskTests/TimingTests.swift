import CaskTesting
import Foundation
import Testing
@testable import Cask

/// ``DiskStore/observeTimings(_:)`` and ``CaskCache/observeTimings(_:)``: what is timed, that
/// a failed sync is timed too, and that nothing is delivered once the observation ends.
@Suite struct TimingTests {
    /// The timings an observer received, in order.
    final class Received: Sendable {
        let all = Shared<[CaskTiming]>([])
        func callAsFunction(_ t: CaskTiming) { all.update { $0.append(t) } }
        func count(_ operation: CaskTiming.Operation) -> Int { all.value.filter { $0.operation == operation }.count }
    }

    @Test func everyDurableWriteTimesItsFileSync() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: options(durability: .everyWrite))
        let received = Received()
        let observation = store.observeTimings { received($0) }
        let before = store.statistics.segmentSyncs
        for i in 0..<5 { try store.setValue(Data("v\(i)".utf8), forKey: "k\(i)") }
        let syncs = store.statistics.segmentSyncs - before
        #expect(syncs == 5)
        #expect(received.count(.fileSync) == syncs, "one timing per segment sync: \(received.all.value)")
        #expect(received.all.value.allSatisfy { $0.duration >= .zero })
        observation.cancel()
        try store.setValue(Data("after".utf8), forKey: "after")
        #expect(received.count(.fileSync) == syncs, "nothing after cancel()")
        try store.close()
    }

    @Test func aFailedSyncIsTimedToo() throws {
        let dir = TemporaryDirectory()
        let fs = FaultyFileSystem(wrapping: POSIXFileSystem())
        var o = options(durability: .everyWrite)
        o.fileSystem = fs
        let store = try DiskStore(directory: dir.path, options: o)
        let received = Received()
        let observation = store.observeTimings { received($0) }
        fs.inject(.init(operation: .sync, at: 1))
        #expect(throws: CaskError.self) { try store.setValue(Data("v".utf8), forKey: "k") }
        #expect(received.count(.fileSync) == 1)
        withExtendedLifetime(observation) {}
        try? store.close()
    }

    @Test func aCompactionPassIsTimedWithItsFolderSyncs() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: options(segmentSize: 4096))
        for i in 0..<200 { try store.setValue(Data(repeating: UInt8(i % 256), count: 100), forKey: "k\(i % 20)") }
        let received = Received()
        let observation = store.observeTimings { received($0) }
        let report = try store.compact()
        #expect(report.segmentsCompacted > 0)
        #expect(received.count(.compaction) >= 1)
        #expect(received.count(.directorySync) >= 1, "the output's rename and the inputs' deletion are made durable")
        let passes = received.all.value.filter { $0.operation == .compaction }
        let total = passes.reduce(Duration.zero) { $0 + $1.duration }
        #expect(abs((total - .nanoseconds(Int64(report.seconds * 1e9))) / .milliseconds(1)) < 1, "the passes' report: \(report.seconds) s")
        withExtendedLifetime(observation) {}
        try store.close()
    }

    @Test func loadsAreTimedAsSucceededOrFailed() async throws {
        let dir = TemporaryDirectory()
        var o = CacheOptions()
        o.disk = options()
        let cache = try CaskCache(directory: dir.path, options: o)
        let received = Received()
        let observation = cache.observeTimings { received($0) }
        let fresh = CacheEntryOptions(timeToLive: .seconds(60))
        let value: String = try await cache.value(forKey: "a", options: fresh) {
            try await Task.sleep(for: .milliseconds(20))
            return "loaded"
        }
        #expect(value == "loaded")
        _ = try await cache.value(forKey: "a", as: String.self, options: fresh) { "never" }   // a hit: no load
        struct Upstream: Error {}
        await #expect(throws: CacheLoadError.self) {
            try await cache.value(forKey: "b", as: String.self, options: fresh) { throw Upstream() }
        }
        let loads = received.all.value.filter { $0.operation == .load }
        #expect(loads.count == 1)
        #expect(loads.first.map { $0.duration >= .milliseconds(20) } == true, "\(loads)")
        #expect(received.count(.failedLoad) == 1)
        withExtendedLifetime(observation) {}
        try await cache.close()
    }

    /// A released observation stops the calls as ``TimingObservation/cancel()`` does, and
    /// several observers each get every timing.
    @Test func releasingTheObservationEndsItAndObserversAreIndependent() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: options(durability: .everyWrite))
        let first = Received(), second = Received()
        var one: TimingObservation? = store.observeTimings { first($0) }
        let two = store.observeTimings { second($0) }
        try store.setValue(Data("1".utf8), forKey: "k")
        #expect(first.count(.fileSync) == 1 && second.count(.fileSync) == 1)
        #expect(one != nil)
        one = nil
        try store.setValue(Data("2".utf8), forKey: "k")
        #expect(first.count(.fileSync) == 1)
        #expect(second.count(.fileSync) == 2)
        withExtendedLifetime(two) {}
        try store.close()
    }
}
