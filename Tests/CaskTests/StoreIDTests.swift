import Foundation
import Testing
@testable import Cask
import CaskFormat

/// A record belongs to one store (issue 41; format-spec.md, "Store id"): seals of format
/// version 8 bind the store's random id, so a record, hint or snapshot from another store under
/// the same key, or from an earlier store at the same path, is damage, never served.
@Suite struct StoreIDTests {
    let key1 = testKey(1)

    /// Writes `count` values of `key` (so that its last has a high sequence number) and closes.
    func write(_ dir: String, _ o: StoreOptions, key: String, value: String, count: Int = 1, others: Int = 0) throws {
        let store = try DiskStore(directory: dir, options: o)
        for i in 0..<others { try store.setValue(Data("other \(i)".utf8), forKey: "other\(i)") }
        for _ in 0..<count { try store.setValue(Data(value.utf8), forKey: key) }
        try store.close()
    }

    @Test func recordOfAnotherStoreIsNotServed() throws {
        let dir = TemporaryDirectory()
        let (a, b) = (dir.file("A"), dir.file("B"))
        let o = try encryptedOptions(key1)
        try write(a, o, key: "k0", value: "written to A", others: 2)
        try write(b, o, key: "k0", value: "written to B", count: 20)   // newer sequence numbers than A's
        try appendForeignRecord("k0", from: b, to: a, options: o)
        let store = try DiskStore(directory: a, options: o)
        #expect(try store.value(forKey: "k0") != Data("written to B".utf8))
        #expect(try store.value(forKey: "k0") == nil, "the key's newest record is damage: the key is dropped")
        #expect(store.statistics.corruptRecords == 1)
        #expect(try store.value(forKey: "other1") == Data("other 1".utf8))
        try store.close()
        #expect(try StoreVerifier(directory: b, encryption: o.encryption).verify().isClean)
    }

    @Test func verifyReportsARecordOfAnotherStore() throws {
        let dir = TemporaryDirectory()
        let (a, b) = (dir.file("A"), dir.file("B"))
        let o = try encryptedOptions(key1)
        try write(a, o, key: "k0", value: "written to A")
        try write(b, o, key: "k0", value: "written to B", count: 5)
        try appendForeignRecord("k0", from: b, to: a, options: o)
        let report = try StoreVerifier(directory: a, encryption: o.encryption).verify()
        #expect(!report.isClean)
        #expect(report.problems.contains { $0.message.contains("fails authentication") })
    }

    @Test func recreatedStoreDoesNotServeAnOldSegment() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("store")
        let o = try encryptedOptions(key1)
        try write(path, o, key: "k0", value: "from the deleted store", count: 30)
        let old = try Data(contentsOf: URL(fileURLWithPath: try #require(try segmentPaths(path).first)))
        try FileManager.default.removeItem(atPath: path)
        try write(path, o, key: "k0", value: "from the new store")
        // The old segment, copied back under an id above the new store's.
        try old.write(to: URL(fileURLWithPath: path + "/" + FileNames.segment(90)))
        try removeIndexSnapshot(path)
        let store = try DiskStore(directory: path, options: o)
        #expect(try store.value(forKey: "k0") != Data("from the deleted store".utf8))
        #expect(store.statistics.corruptRecords == 1)
        try store.close()
    }

    /// Two stores written alike (same sizes, sequence numbers and offsets), B's values with a
    /// TTL: B's hint file, put in A's place, would give A's entries B's expiries.
    @Test func hintOfAnotherStoreIsNotUsed() throws {
        let dir = TemporaryDirectory()
        let (a, b) = (dir.file("A"), dir.file("B"))
        let clock = ManualClock()
        var o = try encryptedOptions(key1)
        o.clock = clock.wallClock
        for (path, ttl) in [(a, Duration?.none), (b, .seconds(60))] {
            let store = try DiskStore(directory: path, options: o)
            for i in 0..<5 { try store.setValue(Data("value \(i)".utf8), forKey: "key\(i)", timeToLive: ttl) }
            try store.close()
            try removeIndexSnapshot(path)
            try DiskStore(directory: path, options: o).close()   // segment 1 is scanned: it gets its hint
        }
        let hint = FileNames.hint(1)
        #expect(FileManager.default.fileExists(atPath: a + "/" + hint))
        try FileManager.default.removeItem(atPath: a + "/" + hint)
        try FileManager.default.copyItem(atPath: b + "/" + hint, toPath: a + "/" + hint)
        try removeIndexSnapshot(a)
        let store = try DiskStore(directory: a, options: o)
        for i in 0..<5 { #expect(try store.value(forKey: "key\(i)") == Data("value \(i)".utf8)) }
        #expect(store.statistics.corruptRecords == 0)
        try store.close()
        let report = try StoreVerifier(directory: a, encryption: o.encryption).verify()
        #expect(report.isClean, "the open replaced the foreign hint: \(report.problems)")
    }

    /// A snapshot sealed for another store id is not used (the records, whose seals bind the
    /// id, are damage then too: the point is that the snapshot is not believed).
    @Test func snapshotOfAnotherStoreIsNotUsed() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("A")
        let o = try encryptedOptions(key1)
        try write(path, o, key: "k0", value: "v")
        do {
            let store = try DiskStore(directory: path, options: o)
            #expect(store.statistics.indexLoadedFromSnapshot)
            try store.close()
        }
        let other = StoreBinding.random(legacyLimit: 0)
        try Data(StoreIDFile.encoded(other)).write(to: URL(fileURLWithPath: path + "/" + StoreIDFile.name))
        var readOnly = o
        readOnly.isReadOnly = true
        let store = try DiskStore(directory: path, options: readOnly)
        #expect(!store.statistics.indexLoadedFromSnapshot)
        #expect(try store.value(forKey: "k0") == nil)
    }
}
