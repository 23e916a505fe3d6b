import Foundation
import Testing
@testable import Cask
import CaskFormat

/// What encryption at rest authenticates besides values (format-spec.md, "Sealed records" and
/// "File seals"): pin records, hint files and the index snapshot. Each forgery below keeps every
/// checksum valid, so only the seal can catch it; a forged file is ignored (its segment scanned,
/// the hints read instead of the snapshot) and a forged pin record is not applied.
@Suite struct FileSealTests {
    let key1 = testKey(1)
    let key2 = testKey(2)

    /// An encrypted store over several segments: values with and without a time to live, one
    /// key pinned, one pinned and unpinned again.
    func fill(_ dir: TemporaryDirectory, _ o: StoreOptions) throws {
        let store = try DiskStore(directory: dir.path, options: o)
        for i in 0..<120 {
            try store.setValue(Data(repeating: UInt8(i), count: 100), forKey: "k\(i)", timeToLive: i % 2 == 0 ? .seconds(3_600) : nil)
        }
        #expect(try store.setPinned(true, forKey: "k3"))
        #expect(try store.setPinned(true, forKey: "k4"))
        #expect(try store.setPinned(false, forKey: "k4"))
        try store.close()
    }

    /// Every key's value, size, expiry and pin state, from a read-only open (which writes
    /// nothing), with the open's statistics.
    func read(_ dir: TemporaryDirectory, _ o: StoreOptions) throws -> (items: [String], stats: StoreStatistics) {
        var ro = o
        ro.isReadOnly = true
        let store = try DiskStore(directory: dir.path, options: ro)
        defer { try? store.close() }
        var items: [String] = []
        for i in 0..<120 {
            let m = try #require(try store.metadata(forKey: "k\(i)"))
            let value = try store.value(forKey: "k\(i)")
            items.append("k\(i) \(value == Data(repeating: UInt8(i), count: 100)) \(m.size) \(m.expirationDate?.timeIntervalSince1970 ?? 0) \(m.isPinned)")
        }
        return (items, store.statistics)
    }

    func hintPaths(_ dir: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".hint") }.sorted().map(dir.file)
    }

    @Test func sealedHintsAndSnapshotOpenTheStoreAsAScanDoes() throws {
        let dir = TemporaryDirectory()
        let o = try encryptedOptions(key1, segmentSize: 4096)
        try fill(dir, o)
        let fromSnapshot = try read(dir, o)
        #expect(fromSnapshot.stats.indexLoadedFromSnapshot)
        #expect(fromSnapshot.items.contains { $0.hasPrefix("k3 true") && $0.hasSuffix("true") })
        try removeIndexSnapshot(dir.path)
        let fromHints = try read(dir, o)
        // A clean close that wrote the snapshot wrote no hint for the active segment: it is scanned.
        #expect(!fromHints.stats.indexLoadedFromSnapshot && fromHints.stats.segmentsLoadedFromHints > 1 && fromHints.stats.segmentsScanned == 1)
        for hint in try hintPaths(dir) { try FileManager.default.removeItem(atPath: hint) }
        let fromScans = try read(dir, o)
        #expect(fromScans.stats.segmentsLoadedFromHints == 0 && fromScans.stats.segmentsScanned > 1)
        #expect(fromSnapshot.items == fromHints.items && fromHints.items == fromScans.items)
        #expect(fromScans.stats.corruptRecords == 0)
        #expect(try StoreVerifier(directory: dir.path, encryption: o.encryption).verify().isClean)
    }

    /// A hint file changed by someone without the key is not used: its segment is scanned and
    /// the store reads exactly as before. "re-encoded" rebuilds the hint from its own entries
    /// with its own seal, to show that the other changes are caught by the seal alone.
    @Test(arguments: ["re-encoded", "expiry removed", "no seal", "another hint's seal", "unknown key id"])
    func aHintWhoseSealDoesNotHoldIsNotUsed(change: String) throws {
        let dir = TemporaryDirectory()
        let o = try encryptedOptions(key1, segmentSize: 4096)
        try fill(dir, o)
        try removeIndexSnapshot(dir.path)
        let before = try read(dir, o)
        let hints = try hintPaths(dir)
        let path = hints[0]
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let sealSize = Format.FileSeal.size(sections: 1)
        let seal = Array(bytes.suffix(sealSize))
        switch change {
        case "no seal":
            bytes.removeLast(sealSize)
        case "another hint's seal":
            bytes.replaceSubrange((bytes.count - sealSize)..., with: try Data(contentsOf: URL(fileURLWithPath: hints[1])).suffix(sealSize))
        case "unknown key id":
            bytes.withUnsafeMutableBytes { $0.put(UInt32(0x1234_5678), at: $0.count - sealSize) }
        default:
            bytes = reencoded(Array(bytes.dropLast(sealSize)), removingExpiry: change == "expiry removed") + seal
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let after = try read(dir, o)
        #expect(after.items == before.items)
        #expect(after.stats.corruptRecords == 0)
        let used = change == "re-encoded"
        #expect(after.stats.segmentsScanned == before.stats.segmentsScanned + (used ? 0 : 1))
        let report = try StoreVerifier(directory: dir.path, encryption: o.encryption).verify()
        #expect(report.problems.contains { $0.file == path } != used)
    }

    /// The hint `bytes` (without a seal) rebuilt from its own entries, optionally with every
    /// value's expiry removed, its checksums valid.
    func reencoded(_ bytes: [UInt8], removingExpiry: Bool) -> [UInt8] {
        let segmentID = bytes.withUnsafeBytes { $0.u64(16) }, segmentSize = bytes.withUnsafeBytes { $0.u64(24) }
        var body: [UInt8] = []
        var encoder = HintEntryEncoder()
        var count = 0
        var removed = 0
        let failure = bytes.withUnsafeBytes { raw in
            HintFile.parse(raw, segmentID: segmentID, segmentSize: segmentSize) { e, key in
                var e = e
                if removingExpiry && e.kind == .value && e.expiry != 0 { e.expiry = 0; removed += 1 }
                encoder.append(e, key: key, to: &body)
                count += 1
            }
        }
        #expect(failure == nil)
        #expect(!removingExpiry || removed > 0, "the hint held no expiry to remove")
        return HintFile.encode(segmentID: segmentID, segmentSize: segmentSize, entryCount: count, body: body)
    }

    /// An index snapshot changed by someone without the key is not used (the hint files are);
    /// the same change to an unencrypted store's snapshot is, to show that the checksums hold
    /// and only the seal catches it.
    @Test(arguments: [(true, "unchanged"), (true, "access time changed"), (true, "no seal"), (true, "unknown key id"),
                      (false, "access time changed")])
    func aSnapshotWhoseSealDoesNotHoldIsNotUsed(encrypted: Bool, change: String) throws {
        let dir = TemporaryDirectory()
        let o = encrypted ? try encryptedOptions(key1, segmentSize: 4096) : options(segmentSize: 4096)
        try fill(dir, o)
        let path = dir.file("INDEX")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let sealSize = encrypted ? IndexSnapshot.Seal.size : 0
        switch change {
        case "no seal":
            bytes.removeLast(sealSize)
        case "unknown key id":
            bytes.withUnsafeMutableBytes { $0.put(UInt32(0x1234_5678), at: $0.count - sealSize) }
        case "access time changed":
            let entries = bytes.withUnsafeBytes { IndexSnapshot.headerSize + Int($0.u32(12)) * IndexSnapshot.markSize + Int($0.u64(56)) * IndexSnapshot.slotSize }
            let accessTime = bytes.withUnsafeBytes { $0.u64(entries + 32) }
            bytes.withUnsafeMutableBytes { raw in
                raw.put(accessTime &+ 1_000, at: entries + 32)
                let trailer = raw.count - sealSize - IndexSnapshot.trailerSize
                raw.put(CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(raw)[..<trailer]))), at: trailer)
            }
        default:
            break
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let after = try read(dir, o)
        #expect(after.stats.indexLoadedFromSnapshot == (change == "unchanged" || !encrypted))
        #expect(after.items.allSatisfy { $0.contains(" true 100 ") })
    }

    /// A pin record someone without the key appended (unsealed, or sealed-looking with a tag that
    /// does not hold) is damage and never applied, by the open that scans it and by the opens after.
    @Test(arguments: ["unsealed", "bad tag"])
    func aForgedPinRecordIsNotApplied(form: String) throws {
        let dir = TemporaryDirectory()
        let o = try encryptedOptions(key1)
        try DiskStore(directory: dir.path, options: o).setValueAndClose(Data("v".utf8), forKey: "k")
        let segment = try segmentPaths(dir.path).last!
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: segment)))
        let target = file.withUnsafeBytes { $0.u64(Format.segmentHeaderSize + 4) }   // the value record's sequence
        let sealed = form == "bad tag"
        let stored = sealed ? (0..<Format.Seal.overhead).map { UInt8(truncatingIfNeeded: $0 &* 7) } : []
        let header = RecordHeader(sequence: target + 100, writeTime: 1, expiry: Int64(bitPattern: target), kind: .pin,
                                  flags: Format.RecordFlag.pinned | (sealed ? Format.RecordFlag.sealed : 0), keyLength: 1,
                                  storedLength: stored.count, originalLength: 0)
        var record = [UInt8](repeating: 0, count: header.encodedSize)
        record.withUnsafeMutableBytes { out in
            Array("k".utf8).withUnsafeBytes { key in stored.withUnsafeBytes { RecordCodec.encode(header, key: key, value: $0, into: out) } }
        }
        try Data(file + record).write(to: URL(fileURLWithPath: segment))
        try removeIndexSnapshot(dir.path)
        let report = try StoreVerifier(directory: dir.path, encryption: o.encryption).verify()
        #expect(report.problems.contains { $0.message.contains("pin record fails authentication") })
        let store = try DiskStore(directory: dir.path, options: o)
        #expect(try store.metadata(forKey: "k")?.isPinned == false)
        #expect(try store.value(forKey: "k") == Data("v".utf8))
        #expect(store.statistics.corruptRecords == 1)
        try store.close()
        // The next opens, from the snapshot and from the hint files, do not apply it either.
        #expect(try read(dirWithOne: dir, o) == false)
        try removeIndexSnapshot(dir.path)
        #expect(try read(dirWithOne: dir, o) == false)
    }

    /// Whether key "k" is pinned, from a read-only open.
    func read(dirWithOne dir: TemporaryDirectory, _ o: StoreOptions) throws -> Bool? {
        var ro = o
        ro.isReadOnly = true
        let store = try DiskStore(directory: dir.path, options: ro)
        defer { try? store.close() }
        return try store.metadata(forKey: "k")?.isPinned
    }

    /// Hints and a snapshot sealed under a key that became a previous one still open the store.
    @Test func filesSealedUnderAPreviousKeyAreUsed() throws {
        let dir = TemporaryDirectory()
        try fill(dir, try encryptedOptions(key1, segmentSize: 4096))
        let rotated = try encryptedOptions(key2, previous: [key1], segmentSize: 4096)
        let fromSnapshot = try read(dir, rotated)
        #expect(fromSnapshot.stats.indexLoadedFromSnapshot)
        try removeIndexSnapshot(dir.path)
        let fromHints = try read(dir, rotated)
        #expect(fromHints.stats.segmentsLoadedFromHints > 1 && fromHints.stats.segmentsScanned == 1 && fromHints.items == fromSnapshot.items)
        // Rotation re-seals the pin records with the values: the new key alone then reads the
        // same items and pin states, from the snapshot, the hint files and scans.
        let store = try DiskStore(directory: dir.path, options: rotated)
        try store.compact()
        #expect(store.encryptionKeysInUse == [StoreEncryption.keyID(of: key2)])
        try store.close()
        let newKeyOnly = try encryptedOptions(key2, segmentSize: 4096)
        #expect(try read(dir, newKeyOnly).items == fromSnapshot.items)
        try removeIndexSnapshot(dir.path)
        #expect(try read(dir, newKeyOnly).items == fromSnapshot.items)
        for hint in try hintPaths(dir) { try FileManager.default.removeItem(atPath: hint) }
        let scanned = try read(dir, newKeyOnly)
        #expect(scanned.items == fromSnapshot.items && scanned.stats.corruptRecords == 0)
    }

    /// `cask dump` (``SegmentDump``) names the key of every sealed record: values and pin
    /// records; tombstones are not sealed.
    @Test func theDumpNamesTheKeyOfEachSealedRecord() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: try encryptedOptions(key1))
        try store.setValue(Data("v".utf8), forKey: "a")
        #expect(try store.setPinned(true, forKey: "a"))
        try store.setValue(Data("w".utf8), forKey: "b")
        try store.removeValue(forKey: "b")
        try store.close()
        let id = try #require(FileNames.id(in: URL(fileURLWithPath: try segmentPaths(dir.path).last!).lastPathComponent, suffix: FileNames.segmentSuffix))
        let dump = try SegmentDump.read(directory: dir.path, segment: id)
        #expect(dump.records.map(\.kind) == ["value", "pin", "value", "tombstone"])
        let keyID = StoreEncryption.keyID(of: key1)
        #expect(dump.records.map(\.sealedKeyID) == [keyID, keyID, keyID, nil])
    }
}
