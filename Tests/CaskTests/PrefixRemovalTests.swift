import Foundation
import Testing
@testable import Cask
import CaskFormat
import CaskTesting

/// `removeValues(withPrefix:)` (format-spec.md, "Removal by prefix"): every item under the
/// prefix written before the call goes, none written after, durably, and every later open
/// (after a crash, from hints or by scanning, by another process) agrees.
@Suite struct PrefixRemovalTests {
    func contents(_ store: DiskStore) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for key in store.keys() { out[key] = try store.value(forKey: key) }
        return out
    }

    /// The removal records in the store's segment files.
    func removalRecords(_ dir: String) throws -> Int {
        let ids = try segmentPaths(dir).compactMap { UInt32(URL(fileURLWithPath: $0).lastPathComponent.prefix(10)) }
        return try ids.reduce(0) { $0 + (try SegmentDump.read(directory: dir, segment: $1).records.filter { $0.kind == "removal" }.count) }
    }

    @Test func removesOlderItemsUnderThePrefixAndNothingElse() throws {
        let dir = TemporaryDirectory()
        var o = options(segmentSize: 4096)
        o.limits = StoreLimits()
        let removedEvents = Shared<[String]>([])
        o.eventHandler = { if case .removed(let key) = $0 { removedEvents.update { $0.append(key) } } }
        let store = try DiskStore(directory: dir.path, options: o)
        for i in 0..<40 { try store.setValue(Data(repeating: UInt8(i), count: 90), forKey: "user/\(i)") }
        try store.setValue(Data("pinned".utf8), forKey: "user/pinned", isPinned: true)
        try store.setValue(Data("k".utf8), forKey: "user/")            // the prefix itself is a key under it
        try store.setValue(Data("u".utf8), forKey: "user")             // shorter: not under it
        try store.setValue(Data("o".utf8), forKey: "users/1")          // another prefix
        try store.setValue(Data("ü".utf8), forKey: "user/ü")           // compared by UTF-8 bytes
        try store.setValue(Data("gone".utf8), forKey: "user/expired", timeToLive: .milliseconds(1))
        usleep(5000)
        #expect(try store.removeValues(withPrefix: "user/") == 43, "live items only: the expired one is not counted")
        #expect(Set(removedEvents.value) == Set((0..<40).map { "user/\($0)" } + ["user/pinned", "user/", "user/ü"]) && removedEvents.value.count == 43)
        try store.setValue(Data("after".utf8), forKey: "user/7")        // written after: stays
        let expected = ["user": Data("u".utf8), "users/1": Data("o".utf8), "user/7": Data("after".utf8)]
        #expect(try contents(store) == expected)
        #expect(try removalRecords(dir.path) == 1)
        try store.close()

        // From the index snapshot, then from hints and scans (the removal record applies).
        for withSnapshot in [true, false] {
            if !withSnapshot { try removeIndexSnapshot(dir.path) }
            let again = try DiskStore(directory: dir.path, options: o)
            #expect(try contents(again) == expected, "snapshot \(withSnapshot)")
            if !withSnapshot { #expect(again.statistics.keysRemovedByPrefixAtOpen > 0) }
            try again.close()
        }
    }

    @Test func aCrashRightAfterTheCallCannotBringAnItemBack() throws {
        for durability in [Durability.none, .everyWrite] {
            let fs = SimulatedFileSystem()
            let store = try DiskStore(directory: "/s", options: simulatedOptions(fs, durability: durability))
            for i in 0..<120 { try store.setValue(Data(repeating: 1, count: 100), forKey: "a/\(i % 30)") }
            try store.setValue(Data("b".utf8), forKey: "b")
            try store.sync()
            #expect(try store.removeValues(withPrefix: "a/") == 30)
            // Nothing after the call is synced: each model keeps what the call made durable.
            for model in SimulatedFileSystem.CrashModel.allCases {
                let rebooted = try DiskStore(directory: "/s", options: simulatedOptions(fs.reboot(model), durability: .none))
                #expect(try contents(rebooted) == ["b": Data("b".utf8)], "\(durability) \(model)")
                try rebooted.close()
            }
            try store.close()
        }
    }

    /// Puts from another thread overlap the call: each lands on one side of it, and every open
    /// afterwards (by scanning, with no snapshot) agrees with what the store answered.
    @Test func overlappingPutsLandOnOneSideAndReopenAgrees() throws {
        let dir = TemporaryDirectory()
        let o = options(segmentSize: 64 << 10)
        let store = try DiskStore(directory: dir.path, options: o)
        for i in 0..<5000 { try store.setValue(Data(repeating: 2, count: 50), forKey: "p/\(i)") }
        let running = Counter()
        let writer = Thread {
            var i = 0
            while running.value == 0 {
                try? store.setValue(Data(repeating: 3, count: 50), forKey: "p/\(i % 7000)")
                i += 1
            }
        }
        writer.start()
        usleep(2000)
        try store.removeValues(withPrefix: "p/")
        try store.setValue(Data("late".utf8), forKey: "p/late")
        running.update(to: 1)
        while !writer.isFinished { usleep(1000) }
        let answered = try contents(store)
        #expect(answered["p/late"] == Data("late".utf8))
        #expect(!answered.values.contains(Data(repeating: 2, count: 50)), "a value written before the call survived it")
        try store.close()
        try removeIndexSnapshot(dir.path)
        let again = try DiskStore(directory: dir.path, options: o)
        #expect(try contents(again) == answered)
        try again.close()
    }

    /// Compaction keeps the record while a segment it may have to act on stays, and drops it
    /// once every record it removes is gone; the items stay removed either way.
    @Test func compactionDropsTheRecordOnceNothingItRemovesRemains() throws {
        let dir = TemporaryDirectory()
        var o = options(segmentSize: 4096)
        o.compaction.isAutomatic = false
        let store = try DiskStore(directory: dir.path, options: o)
        for i in 0..<60 { try store.setValue(Data(repeating: 4, count: 200), forKey: "old/\(i)") }
        for i in 0..<60 { try store.setValue(Data(repeating: 5, count: 200), forKey: "keep/\(i)") }
        #expect(try store.removeValues(withPrefix: "old/") == 60)
        #expect(try removalRecords(dir.path) == 1)
        let report = try store.compact()
        #expect(report.removalsDropped == 1, "\(report)")
        #expect(try removalRecords(dir.path) == 0)
        #expect(try contents(store).count == 60)
        try store.close()
        try removeIndexSnapshot(dir.path)
        let again = try DiskStore(directory: dir.path, options: o)
        #expect(try contents(again).keys.allSatisfy { $0.hasPrefix("keep/") } && again.count == 60)
        try again.close()
    }

    @Test func badPrefixesAndReadOnlyStoresAreRefused() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: options())
        try store.setValue(Data("v".utf8), forKey: "k")
        #expect(throws: CaskError.invalidOption("removeValues(withPrefix:) needs a prefix of at least one byte (removeAll() removes everything)")) {
            try store.removeValues(withPrefix: "")
        }
        #expect(throws: CaskError.keyTooLong(length: 1025, maximum: 1024)) { try store.removeValues(withPrefix: String(repeating: "x", count: 1025)) }
        try store.close()
        var o = options()
        o.isReadOnly = true
        let reader = try DiskStore(directory: dir.path, options: o)
        #expect(throws: CaskError.readOnly(path: dir.path)) { try reader.removeValues(withPrefix: "k") }
        #expect(try reader.value(forKey: "k") == Data("v".utf8))
        try reader.close()
    }

    /// The facade drops its memory copies with their records.
    @Test func theCacheRemovesMemoryCopiesToo() async throws {
        let dir = TemporaryDirectory()
        let cache = try CaskCache(directory: dir.path)
        for i in 0..<10 { try await cache.setValue("v\(i)", forKey: "s/\(i)") }
        for i in 0..<10 { #expect(try await cache.value(String.self, forKey: "s/\(i)") == "v\(i)") }   // in memory now
        #expect(try await cache.removeValues(withPrefix: "s/") == 10)
        for i in 0..<10 { #expect(try await cache.value(String.self, forKey: "s/\(i)") == nil) }
        #expect(cache.statistics.memoryItems == 0)
        try await cache.close()
    }

    @Test func caskRmPrefixRemovesAndSaysHowMany() throws {
        let dir = TemporaryDirectory()
        for key in ["a/1", "a/2", "b"] { #expect(try runCask(["put", dir.path, key, "v"]).0 == 0) }
        let (status, out, _) = try runCask(["rm", dir.path, "a/", "--prefix"])
        #expect(status == 0 && out == "removed 2 items\n", "\(out)")
        let (none, _, err) = try runCask(["rm", dir.path, "a/", "--prefix"])
        #expect(none == 1 && err.contains("no key starts with a/"), "\(err)")
        let (_, listed, _) = try runCask(["ls", dir.path, "--json"])
        #expect(listed.contains("\"b\"") && !listed.contains("a/"))
        let ids = try segmentPaths(dir.path).map { String(URL(fileURLWithPath: $0).lastPathComponent.prefix(10)) }
        let dumped = try ids.map { try runCask(["dump", dir.path, String(Int($0)!)]).1 }.joined()
        #expect(dumped.contains("removal"), "\(dumped)")
        #expect(try runCask(["verify", dir.path]).0 == 0)
    }
}
