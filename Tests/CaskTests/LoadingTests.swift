import Foundation
import Synchronization
import Testing
@testable import Cask

/// The loader API's concurrency and timing rules (docs: LoadingValues.md); the model suite
/// (LoadingModelTests) checks its semantics over random sequences.
@Suite struct LoadingTests {
    struct Failure: Error, Equatable { let n: Int }

    func cache(_ dir: TemporaryDirectory, clock: ManualClock? = nil) throws -> CaskCache {
        var o = CacheOptions()
        o.disk = options(clock: clock?.wallClock ?? .system)
        return try CaskCache(directory: dir.path, options: o)
    }

    @Test func aThousandTasksOverTenColdKeysRunTenLoads() async throws {
        let dir = TemporaryDirectory()
        let c = try cache(dir)
        let calls = Shared<[String: Int]>([:])
        let entry = CacheEntryOptions(timeToLive: .seconds(60))
        let gate = Counter()   // the loads end once every caller waits for one
        let opener = Task { if await eventually(within: 60, { c.loadStatistics.coalescedWaits == 990 }) { gate.increment() } }
        let answers = try await withThrowingTaskGroup(of: (String, String).self) { group in
            for i in 0..<1000 {
                let key = "k\(i % 10)"
                group.addTask {
                    let v = try await c.value(forKey: key, as: String.self, options: entry) {
                        calls.update { $0[key, default: 0] += 1 }
                        while gate.value == 0 { try await Task.sleep(for: .milliseconds(2)) }
                        return "value of \(key)"
                    }
                    return (key, v)
                }
            }
            return try await group.reduce(into: [(String, String)]()) { $0.append($1) }
        }
        await opener.value
        #expect(gate.value == 1, "not every caller joined a load")
        #expect(answers.count == 1000 && answers.allSatisfy { $0.1 == "value of \($0.0)" })
        #expect(calls.value == Dictionary(uniqueKeysWithValues: (0..<10).map { ("k\($0)", 1) }))
        let s = c.loadStatistics
        #expect(s.loads == 10 && s.coalescedWaits == 990 && s.loadFailures == 0, "\(s)")
        #expect(try await c.value(String.self, forKey: "k3") == "value of k3", "the loaded value was stored")
    }

    @Test func aLoaderErrorReachesEveryWaiterAndNothingIsStored() async throws {
        let dir = TemporaryDirectory()
        let c = try cache(dir)
        let calls = Counter(), gate = Counter()
        let entry = CacheEntryOptions(timeToLive: .seconds(60))
        let opener = Task { if await eventually(within: 60, { c.loadStatistics.coalescedWaits == 49 }) { gate.increment() } }
        let errors = await withTaskGroup(of: CacheLoadError?.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    do {
                        _ = try await c.value(forKey: "k", as: Int.self, options: entry) {
                            calls.increment()
                            while gate.value == 0 { try await Task.sleep(for: .milliseconds(2)) }
                            throw Failure(n: 7)
                        }
                        return nil
                    } catch { return error as? CacheLoadError }
                }
            }
            return await group.reduce(into: [CacheLoadError?]()) { $0.append($1) }
        }
        await opener.value
        #expect(calls.value == 1 && gate.value == 1)
        for e in errors {
            if case .loaderFailed(let key, let underlying)? = e, key == "k", underlying as? Failure == Failure(n: 7) { continue }
            Issue.record("got \(String(describing: e))")
        }
        #expect(c.loadStatistics.loadFailures == 1)
        #expect(!c.contains("k"))
    }

    /// One caller cancelled: the load goes on for the other, which gets its value. Every caller
    /// cancelled: the loader sees the cancellation, and the next call starts a new load.
    /// (Loaders wait for a gate, not a fixed time: a busy test machine can hold a task back for
    /// seconds, and the load must still be running when the test cancels its callers.)
    @Test func cancellingOneCallerKeepsTheLoadCancellingAllCancelsIt() async throws {
        let dir = TemporaryDirectory()
        let c = try cache(dir)
        let entry = CacheEntryOptions(timeToLive: .seconds(60))
        let sawCancel = Counter(), calls = Counter(), gate = Counter()
        let loader: @Sendable () async throws -> String = {
            calls.increment()
            do {
                while gate.value == 0 { try await Task.sleep(for: .milliseconds(2)) }
            } catch { sawCancel.increment(); throw error }
            return "loaded"
        }
        let first = Task { try await c.value(forKey: "k", options: entry, loader: loader) }
        let second = Task { try await c.value(forKey: "k", options: entry, loader: loader) }
        #expect(await eventually(within: 60) { c.loadStatistics.coalescedWaits == 1 }, "both callers wait for one load")
        first.cancel()
        await #expect(throws: CacheLoadError.self) { _ = try await first.value }
        gate.increment()
        #expect(try await second.value == "loaded")
        #expect(calls.value == 1 && sawCancel.value == 0)

        gate.update(to: 0)
        let a = Task { try await c.value(forKey: "other", options: entry, loader: loader) }
        let b = Task { try await c.value(forKey: "other", options: entry, loader: loader) }
        #expect(await eventually(within: 60) { c.loadStatistics.coalescedWaits == 2 && calls.value == 2 })
        a.cancel(); b.cancel()
        for t in [a, b] {
            do { _ = try await t.value; Issue.record("a cancelled caller got a value") } catch {
                guard case .cancelled("other")? = error as? CacheLoadError else { Issue.record("\(error)"); continue }
            }
        }
        #expect(await eventually(within: 60) { sawCancel.value == 1 }, "the abandoned load was not cancelled")
        #expect(c.runningLoadCount == 0 && c.loadStatistics.loadsCancelled == 1)
        #expect(!c.contains("other"), "a cancelled load stored nothing")
        gate.increment()
        #expect(try await c.value(forKey: "other", options: entry) { "again" } == "again")
    }

    /// A stale value lives on disk: after a restart inside the stale window a failing loader
    /// still gets it (told it is stale), while plain reads answer nil.
    @Test func aStaleValueSurvivesARestartAndServesAFailingLoader() async throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let entry = CacheEntryOptions(timeToLive: .seconds(60), staleWindow: .seconds(3600))
        do {
            let c = try cache(dir, clock: clock)
            #expect(try await c.value(forKey: "user", options: entry) { "Ada" } == "Ada")
            try await c.close()
        }
        clock.advance(.seconds(61))
        let c = try cache(dir, clock: clock)
        #expect(try await c.value(String.self, forKey: "user") == nil, "plain reads answer nil after the TTL")
        #expect(try c.disk.value(forKey: "user") == nil)
        #expect(c.contains("user"), "the stale value is kept")
        #expect(try await c.metadata(forKey: "user")?.hasStaleWindow == true)
        let got = try await c.loadedValue(forKey: "user", options: entry) { () async throws -> String in throw Failure(n: 1) }
        #expect(got.value == "Ada" && got.isStale && got.loaderError as? Failure == Failure(n: 1))
        // Throttled: the loader is not called again for failSafeThrottle.
        let calls = Counter()
        let again = try await c.loadedValue(forKey: "user", options: entry) { () async throws -> String in
            calls.increment(); return "Grace"
        }
        #expect(again.value == "Ada" && again.isStale && calls.value == 0)
        clock.advance(.seconds(31))
        #expect(try await c.value(forKey: "user", options: entry) { "Grace" } == "Grace")
        #expect(try await c.value(String.self, forKey: "user") == "Grace")
        let s = c.loadStatistics
        #expect(s.failSafeActivations == 1 && s.staleValuesServed == 2 && s.loads == 2, "\(s)")
        clock.advance(.seconds(60 + 3600))
        #expect(!c.contains("user"), "gone after its stale window")
    }

    /// A slow refresh of a stale value: the caller gets the stale value at the soft timeout,
    /// and the refresh is stored when it ends.
    @Test func aSlowRefreshServesTheStaleValueAndIsStoredLater() async throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let c = try cache(dir, clock: clock)
        var entry = CacheEntryOptions(timeToLive: .seconds(10), staleWindow: .seconds(100))
        _ = try await c.value(forKey: "k", options: entry) { "old" }
        clock.advance(.seconds(11))
        entry.softTimeout = .milliseconds(20)
        let gate = Counter()
        let got = try await c.loadedValue(forKey: "k", options: entry) { () async throws -> String in
            while gate.value == 0 { try await Task.sleep(for: .milliseconds(2)) }
            return "new"
        }
        #expect(got.value == "old" && got.isStale && got.loaderError == nil)
        gate.increment()
        #expect(await eventually(within: 60) { (try? await c.value(String.self, forKey: "k")) == "new" }, "the refresh was not stored")
    }

    @Test func aHardTimeoutWithoutAStaleValueThrows() async throws {
        let dir = TemporaryDirectory()
        let c = try cache(dir)
        let entry = CacheEntryOptions(timeToLive: .seconds(10), hardTimeout: .milliseconds(20))
        await #expect(throws: CacheLoadError.self) {
            _ = try await c.value(forKey: "k", options: entry) { () async throws -> String in
                while true { try await Task.sleep(for: .milliseconds(2)) }   // until cancelled
            }
        }
        #expect(await eventually(within: 60) { c.runningLoadCount == 0 }, "the abandoned load was not cancelled")
    }

    /// A read in the last part of the fresh period returns the value and starts one refresh.
    @Test func eagerRefreshStartsOneBackgroundLoad() async throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let c = try cache(dir, clock: clock)
        let entry = CacheEntryOptions(timeToLive: .seconds(10), eagerRefresh: 0.8)
        _ = try await c.value(forKey: "k", options: entry) { 1 }
        clock.advance(.seconds(7))
        #expect(try await c.value(forKey: "k", options: entry) { 2 } == 1)
        #expect(c.loadStatistics.refreshesStarted == 0)
        clock.advance(.seconds(2))
        let calls = Counter(), gate = Counter()
        for _ in 0..<5 {
            #expect(try await c.value(forKey: "k", options: entry) { () async throws -> Int in
                calls.increment()
                while gate.value == 0 { try await Task.sleep(for: .milliseconds(2)) }
                return 3
            } == 1)
        }
        gate.increment()
        #expect(await eventually(within: 60) { (try? await c.value(Int.self, forKey: "k")) == 3 })
        #expect(calls.value == 1 && c.loadStatistics.refreshesStarted == 1)
    }

    @Test(arguments: [
        CacheEntryOptions(timeToLive: .zero), CacheEntryOptions(timeToLive: .seconds(-1)),
        CacheEntryOptions(timeToLive: .seconds(1), staleWindow: .seconds(-1)),
        CacheEntryOptions(timeToLive: .seconds(1), eagerRefresh: 1), CacheEntryOptions(timeToLive: .seconds(1), eagerRefresh: 0),
        CacheEntryOptions(timeToLive: .seconds(1), softTimeout: .zero), CacheEntryOptions(timeToLive: .seconds(1), hardTimeout: .seconds(-2)),
    ])
    func optionsOutOfRangeAreRefusedAndLoadNothing(entry: CacheEntryOptions) async throws {
        let dir = TemporaryDirectory()
        let c = try cache(dir)
        do {
            _ = try await c.value(forKey: "k", options: entry) { "v" }
            Issue.record("accepted \(entry)")
        } catch {
            guard case .cache(.invalidOption(let reason)) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("CacheEntryOptions."))
        }
        let contained = c.contains("k")
        #expect(c.loadStatistics.loads == 0 && !contained)
    }

    /// The fresh-hit fast path checks the options as the full path does: with a fresh value of
    /// the key in memory, an option out of range still throws, and nothing is loaded.
    @Test(arguments: [
        CacheEntryOptions(timeToLive: .zero), CacheEntryOptions(timeToLive: .seconds(1), staleWindow: .seconds(-1)),
        CacheEntryOptions(timeToLive: .seconds(1), eagerRefresh: 1), CacheEntryOptions(timeToLive: .seconds(1), timeToLiveJitter: .seconds(-1)),
        CacheEntryOptions(timeToLive: .seconds(1), softTimeout: .zero), CacheEntryOptions(timeToLive: .seconds(1), hardTimeout: .seconds(-2)),
        CacheEntryOptions(timeToLive: .seconds(1), failSafeThrottle: .seconds(-1)),
        CacheEntryOptions(timeToLive: .seconds(1), tags: [""]), CacheEntryOptions(timeToLive: .seconds(1), tags: [String(repeating: "t", count: 256)]),
    ])
    func optionsOutOfRangeAreRefusedEvenWithAFreshValue(entry: CacheEntryOptions) async throws {
        let dir = TemporaryDirectory()
        let c = try cache(dir)
        try await c.setValue("stored", forKey: "k")
        #expect(try await c.value(String.self, forKey: "k") == "stored")   // in memory, fresh (no TTL)
        do {
            _ = try await c.value(forKey: "k", options: entry) { "loaded" }
            Issue.record("accepted \(entry)")
        } catch {
            guard case .cache(.invalidOption(let reason)) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("CacheEntryOptions.") || reason.contains("tag"), "\(reason)")
        }
        #expect(c.loadStatistics.loads == 0)
        #expect(entry.isValid == false)
    }
}
