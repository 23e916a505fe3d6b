import Foundation
import Testing
@testable import Cask

/// The rules for keys and per-item options that issue 27 found inconsistent between writes and
/// reads and between the layers (its list in rule 8), each with the decision the docs state.
@Suite struct KeyAndOptionRulesTests {
    private func cache(_ dir: TemporaryDirectory, clock: WallClock = .system) throws -> CaskCache {
        var o = CacheOptions()
        o.disk = options(clock: clock)
        return try CaskCache(directory: dir.path, options: o)
    }

    /// A key no write accepts is a caller's bug: reads throw the writes' error instead of
    /// answering nil (a permanent miss), in the store and in the facade. `contains` answers
    /// false (it does not throw).
    @Test func readsOfAKeyNoWriteAcceptsThrowTheWritesError() throws {
        let dir = TemporaryDirectory()
        let c = try cache(dir)
        defer { try? c.close() }
        let long = String(repeating: "k", count: 2000)
        let tooLong = CaskError.keyTooLong(length: 2000, maximum: 1024)
        #expect(throws: CaskError.emptyKey) { try c.disk.value(forKey: "") }
        #expect(throws: tooLong) { try c.disk.value(forKey: long) }
        #expect(throws: CaskError.emptyKey) { try c.disk.metadata(forKey: "") }
        #expect(throws: tooLong) { try c.disk.metadata(forKey: long) }
        #expect(throws: CaskError.emptyKey) { try c.data(forKey: "") }
        #expect(throws: tooLong) { try c.value(String.self, forKey: long) }
        #expect(throws: tooLong) { try c.setValue("v", forKey: long) }
        #expect(!c.contains("") && !c.contains(long))
        // A key of exactly the maximum reads and writes.
        let longest = String(repeating: "k", count: 1024)
        try c.setValue("v", forKey: longest)
        #expect(try c.value(String.self, forKey: longest) == "v")
    }

    /// A time to live under 1 ms could never be read: refused, as the CLI refuses it, and the
    /// key keeps its value.
    @Test func aTimeToLiveUnderAMillisecondIsRefused() throws {
        let dir = TemporaryDirectory()
        let c = try cache(dir)
        defer { try? c.close() }
        try c.setValue("kept", forKey: "k")
        for ttl: Duration in [.zero, .seconds(-1), .microseconds(500)] {
            do {
                try c.setValue("lost", forKey: "k", timeToLive: ttl)
                Issue.record("timeToLive \(ttl) was accepted")
            } catch {
                guard case .invalidOption(let text) = error else { Issue.record("\(error)"); continue }
                #expect(text.contains("at least 1 ms"))
            }
            #expect(throws: CaskError.self) { try c.disk.setValue(Data(), forKey: "k", timeToLive: ttl) }
        }
        #expect(try c.value(String.self, forKey: "k") == "kept")
        try c.setValue("short", forKey: "k", timeToLive: .milliseconds(1))
    }

    /// Keys are compared byte for byte (their UTF-8 form): two strings Swift calls equal in
    /// different Unicode normal forms are two keys, in memory, on disk and after a reopen.
    @Test func unicodeEqualKeysInDifferentNormalFormsAreTwoKeys() throws {
        let dir = TemporaryDirectory()
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed)   // Swift's String equality
        var c: CaskCache? = try cache(dir)
        try c!.setValue(1, forKey: composed)
        try c!.setValue(2, forKey: decomposed)
        #expect(try c!.value(Int.self, forKey: composed) == 1)
        #expect(try c!.value(Int.self, forKey: decomposed) == 2)
        #expect(c!.disk.count == 2)
        try c!.close()
        c = try cache(dir)
        defer { try? c?.close() }
        #expect(try c!.value(Int.self, forKey: composed) == 1)
        #expect(try c!.value(Int.self, forKey: decomposed) == 2)
        #expect(Set(c!.disk.keys().map { Array($0.utf8) }).count == 2)   // a Set of Strings would merge them
    }

    /// A pinned item is exempt from its time to live while pinned; unpinning makes the TTL
    /// count again (from the write), as documented on `setValue`.
    @Test func aPinnedItemOutlivesItsTimeToLiveUntilUnpinned() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let c = try cache(dir, clock: clock.wallClock)
        defer { try? c.close() }
        try c.setValue("v", forKey: "pinned", timeToLive: .milliseconds(10), isPinned: true)
        try c.setValue("v", forKey: "plain", timeToLive: .milliseconds(10))
        clock.advance(.milliseconds(20))
        #expect(try c.value(String.self, forKey: "pinned") == "v")
        #expect(try c.value(String.self, forKey: "plain") == nil)
        #expect(try c.setPinned(false, forKey: "pinned"))
        #expect(try c.value(String.self, forKey: "pinned") == nil)
    }
}

/// The facade answers what users reached through `cache.disk` for (issue 27, rule 8): keys,
/// trims, `removeExpired`, `compact`, the async variants, and the shared cache's error.
@Suite struct FacadeCompletenessTests {
    @Test func trimsAndRemovalsLeaveBothLayers() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        var o = CacheOptions()
        o.disk = options(clock: clock.wallClock)
        let c = try CaskCache(directory: dir.path, options: o)
        defer { try? c.close() }
        for i in 0..<10 { try c.setValue("v\(i)", forKey: "k\(i)", isPinned: i == 0) }
        for i in 0..<10 { _ = try c.value(String.self, forKey: "k\(i)") }   // memory copies
        #expect(Set(c.keys()) == Set((0..<10).map { "k\($0)" }) && c.count == 10)
        try c.trim(toCount: 5)
        #expect(c.count == 5 && c.statistics.memoryItems <= 5)
        #expect(try c.value(String.self, forKey: "k0") == "v0", "pinned items go last")
        try c.setValue("short", forKey: "ttl", timeToLive: .milliseconds(5))
        clock.advance(.milliseconds(10))
        #expect(try c.removeExpired() == 1)
        #expect(try c.removeAll(pinned: false) == 4)
        #expect(c.keys() == ["k0"])
        for k in ["k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"] { #expect(try c.value(String.self, forKey: k) == nil) }
        let report = try c.compact()
        #expect(report.bytesReclaimed > 0)
        #expect(try c.removeAll(pinned: true) == 1 && c.count == 0)
    }

    @Test func asyncVariantsAnswerAsTheSyncOnes() async throws {
        let dir = TemporaryDirectory()
        let c = try CaskCache(directory: dir.path)
        try await c.setValue(7, forKey: "k")
        #expect(c.contains("k"))
        #expect(try await c.setPinned(true, forKey: "k"))
        #expect(try await c.metadata(forKey: "k")?.isPinned == true)
        try await c.sync()
        _ = try await c.compact()
        try await c.close()
        #expect(throws: CaskError.closed) { try c.setValue(8, forKey: "k") }
    }

    @Test func theSharedCacheSaysWhyItCouldNotOpen() throws {
        // The shared cache lives in the user's cache folder; here only its contract is checked:
        // `shared` is nil exactly when `openShared()` throws, and both answer the same instance.
        switch Result(catching: { () throws(CaskError) in try CaskCache.openShared() }) {
        case .success(let cache): #expect(CaskCache.shared === cache)
        case .failure(let error): #expect(CaskCache.shared == nil && !error.description.isEmpty)
        }
    }
}
