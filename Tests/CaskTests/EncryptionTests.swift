import Foundation
import Testing
@testable import Cask
import CaskFormat

/// Encryption at rest (format-spec.md, "Sealed records"): values round-trip and never reach the
/// disk in the clear; every tampering that keeps the checksum valid is caught as damage and
/// nothing wrong is returned; a wrong or missing key is refused at open and changes nothing;
/// keys rotate by compaction.
@Suite struct EncryptionTests {
    let key1 = testKey(1)
    let key2 = testKey(2)

    func segment(_ dir: TemporaryDirectory, _ id: UInt32) -> String { dir.file(FileNames.segment(id)) }

    /// Where each key's record lies, read from an open of the store (closed again).
    func locations(_ dir: TemporaryDirectory, _ o: StoreOptions) throws -> [String: (UInt32, Int, Int)] {
        let store = try DiskStore(directory: dir.path, options: o)
        defer { try? store.close() }
        return recordLocations(store)
    }

    /// Every file's bytes, concatenated: for looking for a value in the clear.
    func allBytes(_ dir: TemporaryDirectory) throws -> Data {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted().reduce(into: Data()) {
            $0 += try Data(contentsOf: URL(fileURLWithPath: dir.file($1)))
        }
    }

    @Test func valuesRoundTripAndNeverReachTheDiskInTheClear() throws {
        let dir = TemporaryDirectory()
        let secret = Data("session-token-7f3a9c".utf8)
        let compressible = Data(String(repeating: "session-token-7f3a9c ", count: 400).utf8)
        var o = try encryptedOptions(key1, segmentSize: 4096)
        o.compression = .default
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            try store.setValue(secret, forKey: "small")
            try store.setValue(compressible, forKey: "large")
            try store.setValue(Data(), forKey: "empty")
            for i in 0..<50 { try store.setValue(secret + Data([UInt8(i)]), forKey: "k\(i)") }
            try store.setValue(secret, forKey: "pinned", isPinned: true)
            #expect(try store.value(forKey: "small") == secret)
            try store.close()
        }
        let bytes = try allBytes(dir)
        #expect(bytes.range(of: Data("session-token".utf8)) == nil, "a value reached the disk in the clear")
        // From the snapshot, then from hints and scans alone.
        for pass in 0..<2 {
            if pass == 1 { try removeIndexSnapshot(dir.path) }
            let store = try DiskStore(directory: dir.path, options: o)
            #expect(try store.value(forKey: "small") == secret)
            #expect(try store.value(forKey: "large") == compressible)
            #expect(try store.value(forKey: "empty") == Data())
            #expect(try store.value(forKey: "k49") == secret + Data([49]))
            #expect(store.statistics.corruptRecords == 0)
            #expect(store.encryptionKeysInUse == [StoreEncryption.keyID(of: key1)])
            #expect(try StoreVerifier(directory: dir.path, encryption: o.encryption).verify().isClean)
            try store.close()
        }
    }

    /// Each change an attacker without the key can make to a sealed record, checksum fixed:
    /// the read returns nothing (never a wrong value), counts the damage, and other keys stay.
    @Test(arguments: ["ciphertext", "tag", "nonce", "expiry", "sequence", "writeTime", "flags-entry", "key id"])
    func tamperingIsDamageNeverAWrongValue(field: String) throws {
        let dir = TemporaryDirectory()
        let o = try encryptedOptions(key1)
        let store = try DiskStore(directory: dir.path, options: o)
        try store.setValue(Data("victim value".utf8), forKey: "victim", timeToLive: .seconds(3600))
        try store.setValue(Data("bystander".utf8), forKey: "bystander")
        try store.close()
        try removeIndexSnapshot(dir.path)
        let (id, offset, _) = try #require(try locations(dir, o)["victim"])
        try tamperRecord(segment(dir, id), at: offset) { r in
            let valueStart = 40 + 6   // "victim"
            switch field {
            case "ciphertext": r[valueStart + 16] ^= 1
            case "tag": r[r.count - 1] ^= 1
            case "nonce": r[valueStart + 4] ^= 1
            case "expiry": r[20] &+= 1          // a longer life
            case "sequence": r[10] = 0x01       // a much higher sequence number (2^48, in range): newer than any
            case "writeTime": r[12] &+= 1
            case "flags-entry": r[29] |= Format.RecordFlag.entry
            default: r[valueStart] ^= 1         // key id
            }
        }
        let reopened = try DiskStore(directory: dir.path, options: o)
        #expect(try reopened.value(forKey: "victim") == nil, "\(field): a tampered value was returned")
        #expect(try reopened.value(forKey: "bystander") == Data("bystander".utf8))
        let report = try StoreVerifier(directory: dir.path, encryption: o.encryption).verify()
        #expect(reopened.statistics.corruptRecords == 1, "\(field)")
        #expect(report.problems.contains { $0.message.contains("authentication") || $0.message.contains("not among the keys") }, "\(field): \(report.problems)")
        try reopened.close()
    }

    /// The index's expiry comes from hint files or the snapshot, which are not sealed: when it
    /// disagrees with the sealed record's (an expiry taken off in a hint), the read is damage,
    /// never the value past its TTL.
    @Test func anExpiryTheRecordDoesNotHaveIsDamage() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: try encryptedOptions(key1))
        try store.setValue(Data("short-lived".utf8), forKey: "k", timeToLive: .seconds(60))
        store.state.withLock { s in
            "k".utf8.withContiguousStorageIfAvailable { key in
                let e = s.index.entry(forKey: UnsafeRawBufferPointer(key))!
                let forged = IndexEntry(segment: e.segment, offset: e.offset, storedLength: e.storedLength, sequence: e.sequence,
                                        expiry: 0, accessTime: e.accessTime, flags: e.flags, keyLength: e.keyLength)
                _ = s.install(forged, forKey: UnsafeRawBufferPointer(key))
            }
        }
        #expect(try store.value(forKey: "k") == nil)
        #expect(store.statistics.corruptRecords == 1)
        try store.close()
    }

    /// Two records' sealed values swapped between keys (checksums fixed): both are damage.
    @Test func sealedValuesSwappedBetweenKeysAreDamage() throws {
        let dir = TemporaryDirectory()
        let o = try encryptedOptions(key1)
        let store = try DiskStore(directory: dir.path, options: o)
        try store.setValue(Data("alice's profile".utf8), forKey: "user/alice")
        try store.setValue(Data("mallory profile".utf8), forKey: "user/mallo")   // same lengths
        try store.close()
        let found = try locations(dir, o)
        let a = try #require(found["user/alice"]), m = try #require(found["user/mallo"])
        var file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: segment(dir, a.0))))
        let valueOffset = 40 + 10
        let aValue = Array(file[(a.1 + valueOffset)..<(a.1 + a.2)]), mValue = Array(file[(m.1 + valueOffset)..<(m.1 + m.2)])
        file.replaceSubrange((a.1 + valueOffset)..<(a.1 + a.2), with: mValue)
        file.replaceSubrange((m.1 + valueOffset)..<(m.1 + m.2), with: aValue)
        for r in [a, m] {
            var record = Array(file[r.1..<(r.1 + r.2)])
            resealChecksum(&record)
            file.replaceSubrange(r.1..<(r.1 + r.2), with: record)
        }
        try Data(file).write(to: URL(fileURLWithPath: segment(dir, a.0)))
        try removeIndexSnapshot(dir.path)
        let reopened = try DiskStore(directory: dir.path, options: o)
        #expect(try reopened.value(forKey: "user/alice") == nil)
        #expect(try reopened.value(forKey: "user/mallo") == nil)
        #expect(reopened.statistics.corruptRecords == 2)
        try reopened.close()
    }

    /// An older record of a key copied after the newest: as it was (older sequence), the newest
    /// still wins; given a higher sequence number (checksum fixed), it is damage, not the old value.
    @Test(arguments: [false, true])
    func anOlderRecordReplayedLaterNeverComesBack(resequenced: Bool) throws {
        let dir = TemporaryDirectory()
        let o = try encryptedOptions(key1)
        var old: [UInt8] = []
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            try store.setValue(Data("role=admin".utf8), forKey: "role")
            let (id, offset, size) = try #require(recordLocations(store)["role"])
            try store.sync()
            old = Array(try Data(contentsOf: URL(fileURLWithPath: segment(dir, id)))[offset..<(offset + size)])
            try store.setValue(Data("role=guest".utf8), forKey: "role")
            try store.setValue(Data("x".utf8), forKey: "later")
            try store.close()
        }
        if resequenced {
            old.withUnsafeMutableBytes { $0.storeBytes(of: UInt64(1_000).littleEndian, toByteOffset: 4, as: UInt64.self) }
            resealChecksum(&old)
        }
        let newest = try segmentPaths(dir.path).last!
        let handle = try #require(FileHandle(forWritingAtPath: newest))
        handle.seekToEndOfFile()
        handle.write(Data(old))
        try handle.close()
        try removeIndexSnapshot(dir.path)
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) where name.hasSuffix(".hint") {
            try FileManager.default.removeItem(atPath: dir.file(name))
        }
        let reopened = try DiskStore(directory: dir.path, options: o)
        let value = try reopened.value(forKey: "role")
        #expect(value != Data("role=admin".utf8), "the replayed old value came back")
        #expect(value == (resequenced ? nil : Data("role=guest".utf8)))
        #expect(reopened.statistics.corruptRecords == (resequenced ? 1 : 0))
        try reopened.close()
    }

    /// A plaintext record with a valid checksum appended to an encrypted store is damage.
    @Test func anUnsealedRecordInAnEncryptedStoreIsDamage() throws {
        let dir = TemporaryDirectory()
        let o = try encryptedOptions(key1)
        try DiskStore(directory: dir.path, options: o).setValueAndClose(Data("real".utf8), forKey: "k")
        let forged = [UInt8](repeating: 0, count: 40 + 1 + 6)
        var record = forged
        let header = RecordHeader(sequence: 1_000, writeTime: 1, expiry: 0, kind: .value, flags: 0, keyLength: 1, storedLength: 6, originalLength: 6)
        record.withUnsafeMutableBytes { out in
            Array("k".utf8).withUnsafeBytes { key in Array("forged".utf8).withUnsafeBytes { RecordCodec.encode(header, key: key, value: $0, into: out) } }
        }
        let handle = try #require(FileHandle(forWritingAtPath: try segmentPaths(dir.path).last!))
        handle.seekToEndOfFile()
        handle.write(Data(record))
        try handle.close()
        try removeIndexSnapshot(dir.path)
        let reopened = try DiskStore(directory: dir.path, options: o)
        #expect(try reopened.value(forKey: "k") == nil)
        #expect(reopened.statistics.corruptRecords == 1)
        try reopened.close()
    }

    /// A wrong key, no key, or a key for an unencrypted store: refused with a clear error, writing
    /// and read-only alike, and by `verify`, and no byte of the folder changes. Also when the
    /// segment header that names the key is damaged: the first value record stands for it (a
    /// keyless open of such a store took every sealed value for damage, and a repair dropped them).
    @Test(arguments: ["wrong key", "no key", "unencrypted store"], [false, true])
    func aWrongOrMissingKeyIsRefusedAndChangesNothing(setup: String, damagedHeader: Bool) throws {
        let dir = TemporaryDirectory()
        var write = setup == "unencrypted store" ? options() : try encryptedOptions(key1)
        let right = write
        try DiskStore(directory: dir.path, options: write).setValueAndClose(Data("v".utf8), forKey: "k")
        if damagedHeader {   // the segment id field: the header's checksum fails
            for path in try segmentPaths(dir.path) { try flipByte(path, at: 20) }
        }
        switch setup {
        case "wrong key": write = try encryptedOptions(key2)
        case "no key": write = options()
        default: write = try encryptedOptions(key1)
        }
        let before = try folderDigest(dir.path)
        for check in ["writing open", "read-only open", "verify"] {
            var o = write
            o.isReadOnly = check == "read-only open"
            #expect {
                if check == "verify" { _ = try StoreVerifier(directory: dir.path, encryption: o.encryption).verify() }
                else { _ = try DiskStore(directory: dir.path, options: o) }
            } throws: { error in
                let text = "\(error)"
                switch error as? CaskError {
                case .encryptionKeyMissing(let path, let id, let given)?:
                    return setup != "unencrypted store" && path.hasSuffix(".cask") && id == StoreEncryption.keyID(of: key1)
                        && given == (setup == "no key" ? [] : [StoreEncryption.keyID(of: key2)]) && text.contains(StoreEncryption.keyIDText(id))
                case .unencryptedStore(let path)?:
                    return setup == "unencrypted store" && path.hasSuffix(".cask") && text.contains("new store only")
                default:
                    return false
                }
            }
        }
        // LOCK names the last process that held the lock, as after any writing open.
        let after = try folderDigest(dir.path).filter { $0.key != "LOCK" }
        #expect(after == before.filter { $0.key != "LOCK" }, "\(after.filter { before[$0.key] != $0.value }.keys.sorted())")
        let opened = try DiskStore(directory: dir.path, options: right)   // the right key still reads it
        #expect(try opened.value(forKey: "k") == Data("v".utf8))
        try opened.close()
    }

    /// Rotation: records under the old key are re-sealed by compaction; once no segment names
    /// it, the old key can go. A crash between the output and the deletion of the inputs (a
    /// copy of the folder then) opens with both keys and loses nothing.
    @Test func keysRotateByCompaction() throws {
        let dir = TemporaryDirectory()
        var values: [String: Data] = [:]
        do {
            let store = try DiskStore(directory: dir.path, options: try encryptedOptions(key1, segmentSize: 4096))
            for i in 0..<120 {
                values["k\(i % 60)"] = Data("value \(i)".utf8)
                try store.setValue(values["k\(i % 60)"]!, forKey: "k\(i % 60)")
            }
            try store.close()
        }
        let rotating = try encryptedOptions(key2, previous: [key1], segmentSize: 4096)
        let store = try DiskStore(directory: dir.path, options: rotating)
        #expect(Set(store.encryptionKeysInUse) == [StoreEncryption.keyID(of: key1), StoreEncryption.keyID(of: key2)])
        try store.setValue(Data("new".utf8), forKey: "fresh")
        values["fresh"] = Data("new".utf8)
        try store.sync()
        let midway = TemporaryDirectory()
        try copyStore(dir.path, to: midway.path + "/copy")
        let report = try store.compact()
        #expect(report.segmentsCompacted > 0)
        #expect(store.encryptionKeysInUse == [StoreEncryption.keyID(of: key2)])
        for (k, v) in values { #expect(try store.value(forKey: k) == v, "\(k)") }
        try store.close()
        // The old key is retired: the store opens with the new one alone.
        let retired = try DiskStore(directory: dir.path, options: try encryptedOptions(key2))
        for (k, v) in values { #expect(try retired.value(forKey: k) == v, "\(k)") }
        #expect(retired.statistics.corruptRecords == 0)
        try retired.close()
        // The copy from before the pass still needs both keys, and has everything.
        #expect(throws: CaskError.self) { try DiskStore(directory: midway.path + "/copy", options: try encryptedOptions(key2)) }
        let copy = try DiskStore(directory: midway.path + "/copy", options: rotating)
        for (k, v) in values { #expect(try copy.value(forKey: k) == v, "\(k)") }
        try copy.close()
    }

    /// Readers on several threads open sealed values at once (each takes a context of its own
    /// from the key's pool) while a writer seals and compaction re-seals: every value read is
    /// one that was written for its key. Also run under ThreadSanitizer.
    @Test func concurrentReadersWritersAndCompactionAgree() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: try encryptedOptions(key1, segmentSize: 8192))
        for i in 0..<64 { try store.setValue(Data("k\(i)=0".utf8), forKey: "k\(i)") }
        let wrong = Counter()
        runOnThreads(4) { t in
            for n in 0..<1500 {
                let i = (n * 7 + t) % 64
                do {
                    if t == 0 {
                        try store.setValue(Data("k\(i)=\(n)".utf8), forKey: "k\(i)")
                        if n % 300 == 299 { try store.compact() }
                    } else if let value = try store.value(forKey: "k\(i)"), !value.starts(with: Data("k\(i)=".utf8)) {
                        wrong.increment()
                    }
                } catch {
                    wrong.increment()
                }
            }
        }
        #expect(wrong.value == 0)
        #expect(store.statistics.corruptRecords == 0)
        try store.close()
    }

    /// An idle store opened with a new current key is re-sealed by background compaction alone.
    @Test func backgroundCompactionRotatesAnIdleStore() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try DiskStore(directory: dir.path, options: try encryptedOptions(key1, segmentSize: 4096))
            for i in 0..<80 { try store.setValue(Data("v\(i)".utf8), forKey: "k\(i % 40)") }
            try store.close()
        }
        var o = try encryptedOptions(key2, previous: [key1], segmentSize: 4096)
        o.compaction.isAutomatic = true
        o.compaction.checkInterval = .milliseconds(20)
        let store = try DiskStore(directory: dir.path, options: o)
        let key2ID = StoreEncryption.keyID(of: key2)
        #expect(waitUntil(30) { store.encryptionKeysInUse == [key2ID] }, "\(store.encryptionKeysInUse)")
        for i in 40..<80 { #expect(try store.value(forKey: "k\(i % 40)") == Data("v\(i)".utf8)) }
        try store.close()
    }

    @Test func keysMustBeDistinct() {
        #expect(throws: CaskError.self) { try StoreEncryption(currentKey: key1, previousKeys: [key1]) }
        #expect(StoreEncryption.keyID(of: key1) != StoreEncryption.keyID(of: key2))
    }
}

extension DiskStore {
    func setValueAndClose(_ value: Data, forKey key: String) throws {
        try setValue(value, forKey: key)
        try close()
    }
}
