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
