import Foundation
import Testing
@testable import Cask

/// One regression test per disk-store and facade item of issue 12; each failed before its fix.
@Suite struct ContractRegressionTests {
    func limitedOptions(_ clock: ManualClock, byteLimit: Int? = nil, ageLimit: Duration? = nil) -> StoreOptions {
        var o = options(segmentSize: 4096, clock: clock.wallClock)
        o.compression = .never
        o.limits = StoreLimits(byteLimit: byteLimit, ageLimit: ageLimit)
        return o
    }

    @Test func aPutOverTheByteBudgetIsRefusedAndEvictsNothing() throws {
        let dir = TemporaryDirectory(), clock = ManualClock()
        let store = try DiskStore(directory: dir.path, options: limitedOptions(clock, byteLimit: 16384))
        for i in 0..<5 { try store.setValue(Data(count: 100), forKey: "k\(i)") }
        #expect(throws: CaskError.self) { try store.setValue(Data(count: 16_385), forKey: "big") }
        #expect(try store.keys().count == 5 && store.metadata(forKey: "big") == nil)
        try store.close()
    }

    @Test func trimToSizeDropsExpiredItemsBeforeLiveOnes() throws {
        let dir = TemporaryDirectory(), clock = ManualClock()
        let store = try DiskStore(directory: dir.path, options: limitedOptions(clock))
        try store.setValue(Data(count: 500), forKey: "live-old")
        clock.advance(.milliseconds(10))
        try store.setValue(Data(count: 500), forKey: "expiring", timeToLive: .milliseconds(5))
        clock.advance(.milliseconds(10))
        try store.trim(toSize: 600)
        #expect(try store.value(forKey: "live-old") != nil)
        try store.close()
    }

    @Test func trimToDateAndAgeAreExactToTheMillisecond() throws {
        let dir = TemporaryDirectory(), clock = ManualClock()
        let store = try DiskStore(directory: dir.path, options: limitedOptions(clock, ageLimit: .milliseconds(1500)))
        try store.setValue(Data("a".utf8), forKey: "a")
        clock.advance(.milliseconds(400))
        #expect(try store.value(forKey: "a") != nil)     // read 400 ms after the write
        let cutoff = Date(timeIntervalSince1970: Double(clock.milliseconds - 100) / 1000)
        #expect(try store.trim(toDate: cutoff) == 0)     // read after the cutoff: kept
        clock.advance(.milliseconds(1500))
        #expect(store.contains("a"))                     // exactly the age limit: still there
        clock.advance(.milliseconds(1))
        #expect(try store.value(forKey: "a") == nil)
        try store.close()
    }

    @Test func theFacadeNeverAnswersAnExpiredItemFromMemory() throws {
        let dir = TemporaryDirectory(), clock = ManualClock()
        var o = CacheOptions()
        o.disk = limitedOptions(clock)
        let cache = try CaskCache(directory: dir.path, options: o)
        try cache.setValue(42, forKey: "k", timeToLive: .seconds(1))
        #expect(try cache.value(Int.self, forKey: "k") == 42)
        clock.advance(.milliseconds(1500))
        #expect(try cache.value(Int.self, forKey: "k") == nil)
        try cache.close()
    }

    @Test func rawDataRoundTripsThroughEveryPath() throws {
        let dir = TemporaryDirectory()
        let bytes = Data([0, 1, 2, 255, 254])
        var cache = try CaskCache(directory: dir.path)
        try cache.setValue(bytes, forKey: "d")
        #expect(try cache.value(Data.self, forKey: "d") == bytes)
        try cache.close()
        cache = try CaskCache(directory: dir.path)
        #expect(try cache.value(Data.self, forKey: "d") == bytes)
        #expect(try cache.data(forKey: "d") == bytes)
        try cache.close()
    }

    @Test(arguments: ["", "--cache"])
    func aNormalExitWithoutCloseKeepsEveryPut(flag: String) throws {
        let dir = TemporaryDirectory()
        let (status, _, stderr) = try runHarness(["exit-without-close", dir.file("s"), "300"] + (flag.isEmpty ? [] : [flag]))
        #expect(status == 0, "\(stderr)")
        let store = try DiskStore(directory: dir.file("s"), options: options())
        for i in 0..<300 { #expect(try store.value(forKey: "key-\(i)") == Data("value-\(i)".utf8)) }
        try store.close()
    }
}
