import Foundation
import Testing
@testable import Cask
import CaskFormat
import CaskTesting

/// `removeValues(taggedWith:)` (format-spec.md, "Removal by tag"): every cache entry listing
/// the tag written before the call goes, none written after, durably, and every later open
/// (from the snapshot, hints or scans, read-only, after a crash) agrees.
@Suite struct TagRemovalTests {
    func contents(_ store: DiskStore) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for key in store.keys() { out[key] = try store.withRecord(forKey: key) { bytes, _, _ in Data(bytes) } }
        return out
    }

    /// Writes `value` as a cache entry fresh for an hour, listing `tags`.
    func putEntry(_ store: DiskStore, _ key: String, _ value: Data, tags: [String]) throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        _ = try value.withUnsafeBytes { try store.putEntry($0, forKey: key, freshUntil: now + 3_600_000, expiry: now + 7_200_000, tags: tags) }
    }

    func tagRemovalRecords(_ dir: String) throws -> Int {
        let ids = try segmentPaths(dir).compactMap { UInt32(URL(fileURLWithPath: $0).lastPathComponent.prefix(10)) }
        return try ids.reduce(0) { $0 + (try SegmentDump.read(directory: dir, segment: $1).records.filter { $0.kind == "removal" && $0.isTagged }.count) }
    }

    /// A store with tagged entries (compressed ones included), untagged entries and plain
    /// values; "team:7" is removed, then one tagged entry is written again.
    func removeTeamSeven(_ dir: String, _ o: StoreOptions) throws -> [String: Data] {
        let store = try DiskStore(directory: dir, options: o)
        let big = Data(repeating: 9, count: 4000)   // compressed: the header is inside the LZ4 block
        for i in 0..<30 { try putEntry(store, "u/\(i)", Data("user \(i)".utf8), tags: i % 3 == 0 ? ["team:7"] : ["team:8"]) }
        try putEntry(store, "both", Data("b".utf8), tags: ["team:8", "team:7"])
        try putEntry(store, "big", big, tags: ["team:7"])
        try putEntry(store, "bigOther", big, tags: ["team:70"])      // a tag is compared whole
        try putEntry(store, "untagged", Data("e".utf8), tags: [])
        try store.setValue(Data("plain".utf8), forKey: "team:7")      // a key, not a tag
        #expect(try store.removeValues(taggedWith: "team:7") == 12)
        try putEntry(store, "u/3", Data("again".utf8), tags: ["team:7"])   // written after: stays
        var expected: [String: Data] = ["bigOther": big, "untagged": Data("e".utf8), "team:7": Data("plain".utf8), "u/3": Data("again".utf8)]
        for i in 0..<30 where i % 3 != 0 { expected["u/\(i)"] = Data("user \(i)".utf8) }
        #expect(try contents(store) == expected)
        #expect(try tagRemovalRecords(dir) == 1)
        try store.close()
        return expected
    }

    @Test func removesOlderEntriesWithTheTagAndNothingElse() throws {
        let dir = TemporaryDirectory()
        let o = options(segmentSize: 4096)
        let expected = try removeTeamSeven(dir.path, o)
        // From the snapshot; from hints; by scanning (no hint); read-only.
        for way in ["snapshot", "hints", "scan", "read-only"] {
            if way != "snapshot" { try removeIndexSnapshot(dir.path) }
            if way == "scan" {
                for hint in try FileManager.default.contentsOfDirectory(atPath: dir.path) where hint.hasSuffix(".hint") {
                    try FileManager.default.removeItem(atPath: dir.path + "/" + hint)
                }
            }
            var opening = o
            opening.isReadOnly = way == "read-only"
            let again = try DiskStore(directory: dir.path, options: opening)
            #expect(try contents(again) == expected, "\(way)")
            // 11: u/3 was written again after the removal, so its older record is not in the index.
            if way != "snapshot" { #expect(again.statistics.keysRemovedByTagAtOpen == 11, "\(way)") }
            try again.close()
        }
    }

    @Test func aCrashRightAfterTheCallCannotBringAnEntryBack() throws {
        for durability in [Durability.none, .everyWrite] {
            let fs = SimulatedFileSystem()
            let store = try DiskStore(directory: "/s", options: simulatedOptions(fs, durability: durability))
            for i in 0..<60 { try putEntry(store, "a/\(i % 20)", Data(repeating: 1, count: 100), tags: ["t"]) }
            try store.setValue(Data("b".utf8), forKey: "b")
            try store.sync()
            #expect(try store.removeValues(taggedWith: "t") == 20)
            for model in SimulatedFileSystem.CrashModel.allCases {
                let rebooted = try DiskStore(directory: "/s", options: simulatedOptions(fs.reboot(model), durability: .none))
                #expect(try contents(rebooted) == ["b": Data("b".utf8)], "\(durability) \(model)")
                try rebooted.close()
            }
            try store.close()
        }
    }

    @Test func compactionDropsTheRecordOnceNothingItRemovesRemains() throws {
        let dir = TemporaryDirectory()
        var o = options(segmentSize: 4096)
        o.compaction.isAutomatic = false
        let store = try DiskStore(directory: dir.path, options: o)
        for i in 0..<60 { try putEntry(store, "old/\(i)", Data(repeating: 4, count: 200), tags: ["old"]) }
        for i in 0..<60 { try putEntry(store, "keep/\(i)", Data(repeating: 5, count: 200), tags: ["keep"]) }
        #expect(try store.removeValues(taggedWith: "old") == 60)
        #expect(try tagRemovalRecords(dir.path) == 1)
        let report = try store.compact()
        #expect(report.removalsDropped == 1, "\(report)")
        #expect(try tagRemovalRecords(dir.path) == 0)
        try store.close()
        try removeIndexSnapshot(dir.path)
        let again = try DiskStore(directory: dir.path, options: o)
        #expect(again.keys().allSatisfy { $0.hasPrefix("keep/") } && again.count == 60)
        #expect(again.statistics.keysRemovedByTagAtOpen == 0)
        try again.close()
    }

    /// A tagged entry whose record cannot be read is not removed (an I/O error is never
    /// damage, and says nothing of its tags): the call throws, no snapshot is written, and the
    /// next open applies the record.
    @Test func aFailedReadFailsTheCallAndTheNextOpenFinishesIt() throws {
        let dir = TemporaryDirectory()
        let faulty = FaultyFileSystem(wrapping: POSIXFileSystem())
        var o = options(segmentSize: 4096)
        o.fileSystem = faulty
        o.compaction.isAutomatic = false
        let store = try DiskStore(directory: dir.path, options: o)
        for i in 0..<40 { try putEntry(store, "k/\(i)", Data(repeating: 6, count: 300), tags: ["t"]) }
        try store.setValue(Data("p".utf8), forKey: "plain")
        try store.sync()
        faulty.inject(.init(operation: .map, at: 1, forever: true))
        faulty.inject(.init(operation: .read, at: 1, forever: true))
        #expect(throws: CaskError.self) { try store.removeValues(taggedWith: "t") }
        faulty.clear()
        #expect(store.count > 1, "the unread entries stay")
        try store.close()
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/INDEX"), "no snapshot while the removal is unfinished")
        let again = try DiskStore(directory: dir.path, options: options(segmentSize: 4096))
        #expect(try contents(again) == ["plain": Data("p".utf8)])
        try again.close()
    }

    @Test func badTagsAndReadOnlyStoresAreRefused() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: options())
        try putEntry(store, "k", Data("v".utf8), tags: ["t"])
        #expect(throws: CaskError.self) { try store.removeValues(taggedWith: "") }
        #expect(throws: CaskError.self) { try store.removeValues(taggedWith: String(repeating: "x", count: 256)) }
        #expect(throws: CaskError.self) { try putEntry(store, "k2", Data(), tags: [""]) }
        #expect(throws: CaskError.self) { try putEntry(store, "k2", Data(), tags: (0..<65).map { "t\($0)" }) }
        #expect(store.keys() == ["k"], "nothing was written by a refused call")
        try store.close()
        var o = options()
        o.isReadOnly = true
        let reader = try DiskStore(directory: dir.path, options: o)
        #expect(throws: CaskError.readOnly(path: dir.path)) { try reader.removeValues(taggedWith: "t") }
        try reader.close()
    }

    /// The example: entries loaded with tags, removed by one of them from both layers,
    /// and still removed after a restart.
    @Test func theCacheRemovesTaggedEntriesFromBothLayersAndAcrossARestart() async throws {
        let dir = TemporaryDirectory()
        let cache = try CaskCache(directory: dir.path)
        let team7 = CacheEntryOptions(timeToLive: .seconds(60), staleWindow: .seconds(86_400), tags: ["team:7"])
        let team8 = CacheEntryOptions(timeToLive: .seconds(60), tags: ["team:8"])   // tags without a stale window
        for i in 0..<5 {
            _ = try await cache.value(forKey: "user:\(i)", as: String.self, options: team7) { "seven \(i)" }
            _ = try await cache.value(forKey: "other:\(i)", as: String.self, options: team8) { "eight \(i)" }
        }
        #expect(try await cache.value(String.self, forKey: "user:1") == "seven 1")   // a memory copy
        #expect(try await cache.removeValues(taggedWith: "team:7") == 5)
        #expect(try await cache.value(String.self, forKey: "user:1") == nil)
        #expect(try await cache.value(String.self, forKey: "other:1") == "eight 1")
        // Metadata says what an entry was tagged with, and whether it has a stale window.
        let other = try await cache.metadata(forKey: "other:1")
        #expect(other?.tags == ["team:8"] && other?.hasStaleWindow == false && other?.size == Data("\"eight 1\"".utf8).count, "\(String(describing: other))")
        // Loaded again after the removal: the loader runs, and the new entry stays.
        let loads = Counter()
        let again = try await cache.value(forKey: "user:1", as: String.self, options: team7) { loads.increment(); return "reloaded" }
        #expect(again == "reloaded" && loads.value == 1)
        let reloaded = try await cache.metadata(forKey: "user:1")
        #expect(reloaded?.tags == ["team:7"] && reloaded?.hasStaleWindow == true)
        try await cache.close()
        try removeIndexSnapshot(dir.path)
        let reopened = try CaskCache(directory: dir.path)
        #expect(Set(reopened.keys()) == Set((0..<5).map { "other:\($0)" } + ["user:1"]))
        try await reopened.close()
        let invalid = CacheEntryOptions(timeToLive: .seconds(1), tags: [String(repeating: "t", count: 256)])
        await #expect(throws: CacheLoadError.self) { _ = try await reopened.value(forKey: "x", as: String.self, options: invalid) { "x" } }
    }

    @Test func caskRmTagRemovesAndDumpShowsTheFlags() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try DiskStore(directory: dir.path, options: options())
            try putEntry(store, "a", Data("1".utf8), tags: ["x"])
            try putEntry(store, "b", Data("2".utf8), tags: ["y"])
            try store.close()
        }
        let (status, out, _) = try runCask(["rm", dir.path, "x", "--tag"])
        #expect(status == 0 && out == "removed 1 items\n", "\(out)")
        let (none, _, err) = try runCask(["rm", dir.path, "x", "--tag"])
        #expect(none == 1 && err.contains("no entry is tagged x"), "\(err)")
        let (both, _, bothErr) = try runCask(["rm", dir.path, "x", "--tag", "--prefix"])
        #expect(both != 0 && bothErr.contains("cannot be used together"), "\(bothErr)")
        let (long, _, longErr) = try runCask(["rm", dir.path, String(repeating: "t", count: 256), "--tag"])
        #expect(long == 64 && longErr.contains("a tag is 1 to 255 bytes"), "\(long) \(longErr)")
        let ids = try segmentPaths(dir.path).map { String(URL(fileURLWithPath: $0).lastPathComponent.prefix(10)) }
        let dumped = try ids.map { try runCask(["dump", dir.path, String(Int($0)!)]).1 }.joined()
        #expect(dumped.contains("entry tagged") && dumped.contains("removal"), "\(dumped)")
        #expect(try runCask(["verify", dir.path]).0 == 0)
        let (_, listed, _) = try runCask(["ls", dir.path])
        #expect(listed.contains("b") && !listed.contains("\na "), "\(listed)")
    }
}
