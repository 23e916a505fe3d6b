import Foundation
import Testing
import CaskFormat
@testable import Cask

/// ``DiskStore/metadata(forKey:)`` and the listings: the index keeps neither a value's original
/// length nor its write time, so they come from the record's header, wherever the record is
/// (the write buffer, a segment, after a reopen from the snapshot or from hint files, in a
/// reader), and a header that is not the item's is damage.
@Suite struct MetadataTests {
    struct Expected {
        var size: Int
        var compressed: Bool
        var written: Int64
    }

    /// Three items written 1,234 ms apart: an LZ4-compressed one, a small one, an empty one.
    func fill(_ store: DiskStore, clock: ManualClock) throws -> [String: Expected] {
        var rng = SeededBytes(seed: 7)
        var expected: [String: Expected] = [:]
        for (key, value) in [("zipped", rng.compressible(64 << 10)), ("small", Data("hello".utf8)), ("empty", Data())] {
            clock.advance(.milliseconds(1234))
            try store.setValue(value, forKey: key)
            expected[key] = Expected(size: value.count, compressed: key == "zipped", written: clock.milliseconds)
        }
        return expected
    }

    func check(_ store: DiskStore, _ expected: [String: Expected], _ label: String) throws {
        for (key, e) in expected {
            let m = try #require(try store.metadata(forKey: key), "\(label): \(key)")
            #expect(m.size == e.size && m.isCompressed == e.compressed, "\(label): \(key)")
            #expect(e.compressed ? m.storedSize < m.size : m.storedSize == m.size, "\(label): \(key)")
            #expect(Int64((m.writeDate.timeIntervalSince1970 * 1000).rounded()) == e.written, "\(label): \(key) to the millisecond")
        }
        let all = try store.allMetadata()
        #expect(Set(all.map(\.key)) == Set(expected.keys), "\(label)")
        var listed: [ItemMetadata] = []
        try store.forEachItemInKeyOrder { listed.append($0); return true }
        #expect(listed == all.sorted { $0.key < $1.key }, "\(label)")
    }

    @Test func sizesAndWriteTimesComeFromTheRecordHeaderWhereverItIs() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let expected: [String: Expected]
        do {
            let store = try DiskStore(directory: dir.path, options: options(clock: clock.wallClock))
            expected = try fill(store, clock: clock)
            try check(store, expected, "in the write buffer")
            try store.sync()
            try check(store, expected, "synced")
            try store.close()
        }
        do {
            let store = try DiskStore(directory: dir.path, options: options(clock: clock.wallClock))
            #expect(store.statistics.indexLoadedFromSnapshot)
            try check(store, expected, "from the snapshot")
            try store.close()
        }
        var readOnly = options(clock: clock.wallClock)
        readOnly.isReadOnly = true
        try check(try DiskStore(directory: dir.path, options: readOnly), expected, "in a reader")
        try FileManager.default.removeItem(atPath: dir.path + "/" + IndexSnapshot.fileName)
        let store = try DiskStore(directory: dir.path, options: options(clock: clock.wallClock))
        #expect(!store.statistics.indexLoadedFromSnapshot)
        try check(store, expected, "from hint files")
        try store.close()
    }

    /// A header whose sequence is not the index's: the item is reported damaged and removed, as a
    /// read would, instead of describing another record.
    @Test func aHeaderThatIsNotTheItemsIsDamage() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try DiskStore(directory: dir.path, options: options())
            try store.setValue(Data("first".utf8), forKey: "a")
            try store.setValue(Data("second".utf8), forKey: "b")
            var rng = SeededBytes(seed: 3)
            try store.setValue(rng.random(8192), forKey: "pad")   // the segment's tail, which the snapshot checks
            try store.close()
        }
        // The first record's sequence (header bytes 4-11) changes; the snapshot still holds.
        let segment = try #require(try segmentPaths(dir.path).first)
        try flipByte(segment, at: Format.segmentHeaderSize + 4)
        let store = try DiskStore(directory: dir.path, options: options())
        #expect(try store.metadata(forKey: "a") == nil)
        #expect(store.statistics.corruptRecords == 1)
        #expect(try store.value(forKey: "a") == nil)
        #expect(try store.metadata(forKey: "b")?.size == 6)
        #expect(try store.allMetadata().map(\.key).sorted() == ["b", "pad"])
        #expect(store.statistics.indexLoadedFromSnapshot)
        try store.close()
    }
}
