import Foundation
import Testing
@testable import Cask
import CaskFormat

/// Version-7 stores (written before store ids) open, read and upgrade (format-spec.md,
/// "Versioning", "Store id"); the id file is checked strictly.
@Suite struct StoreIDUpgradeTests {
    let fixtureValues = ["alpha": "alpha value v7", "beta": "beta value v7", "gamma": "gamma value v7",
                         "delta": "delta value v7", "epsilon": "epsilon value v7", "zeta": "zeta value v7"]

    func expectFixtureValues(_ store: DiskStore) throws {
        for (key, value) in fixtureValues { #expect(try store.value(forKey: key) == Data(value.utf8), "\(key)") }
        #expect(store.statistics.corruptRecords == 0)
    }

    @Test func versionSevenStoreOpensReadsAndUpgrades() throws {
        let dir = TemporaryDirectory()
        let (path, key) = try fixtureStore("SealedV7Store", in: dir)
        var o = try encryptedOptions(key)
        #expect(try segmentVersions(path) == [7, 7, 7])
        // A read-only open reads it as it was written, and makes no id.
        var readOnly = o
        readOnly.isReadOnly = true
        try expectFixtureValues(try DiskStore(directory: path, options: readOnly))
        #expect(!FileManager.default.fileExists(atPath: path + "/STOREID"))
        // The first writing open makes the id; new segments bind it, old ones keep verifying.
        do {
            let store = try DiskStore(directory: path, options: o)
            try expectFixtureValues(store)
            try store.setValue(Data("eta v8".utf8), forKey: "eta")
            try store.close()
        }
        let idFile = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "/STOREID")))
        guard case .valid(let binding) = idFile.withUnsafeBytes(StoreIDFile.parse) else { Issue.record("STOREID not valid"); return }
        #expect(binding.legacyLimit == 6)
        #expect(try segmentVersions(path).last == 8)
        #expect(try StoreVerifier(directory: path, encryption: o.encryption).verify().isClean)
        // Compaction re-seals the version-7 segments: afterwards every segment is version 8.
        o.compaction.isAutomatic = false
        let store = try DiskStore(directory: path, options: o)
        _ = try store.compact()
        try expectFixtureValues(store)
        #expect(try store.value(forKey: "eta") == Data("eta v8".utf8))
        #expect(try store.value(forKey: "beta") == Data("beta value v7".utf8))
        try store.close()
        #expect(try segmentVersions(path).allSatisfy { $0 == 8 })
        #expect(try StoreVerifier(directory: path, encryption: o.encryption).verify().isClean)
    }

    /// A reader opened before the upgrade (no id yet) takes the binding a writer made when it
    /// refreshes: the values written and re-sealed under the id read as they were written.
    @Test func aReaderOpenedBeforeTheUpgradeReadsTheUpgradedStoreAfterARefresh() throws {
        let dir = TemporaryDirectory()
        let (path, key) = try fixtureStore("SealedV7Store", in: dir)
        var o = try encryptedOptions(key)
        o.compaction.isAutomatic = false
        var readOnly = o
        readOnly.isReadOnly = true
        let reader = try DiskStore(directory: path, options: readOnly)
        try expectFixtureValues(reader)
        let writer = try DiskStore(directory: path, options: o)
        try writer.setValue(Data("eta v8".utf8), forKey: "eta")
        _ = try writer.compact()   // every version-7 segment re-sealed under the new id
        try writer.close()
        try reader.refresh()
        try expectFixtureValues(reader)
        #expect(try reader.value(forKey: "eta") == Data("eta v8".utf8))
        #expect(reader.statistics.corruptRecords == 0)
        try reader.close()
    }

    /// After the upgrade, a version-7 segment above the legacy limit (copied from anywhere)
    /// is read as a version-8 one: its seals fail (verify reports each record), never served.
    @Test func versionSevenSegmentAddedAfterTheUpgradeFailsAuthentication() throws {
        let dir = TemporaryDirectory()
        let (path, key) = try fixtureStore("SealedV7Store", in: dir)
        let o = try encryptedOptions(key)
        try DiskStore(directory: path, options: o).close()   // the upgrade
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/SealedV7Store")
        try FileManager.default.copyItem(atPath: fixture.appendingPathComponent(FileNames.segment(6)).path, toPath: path + "/" + FileNames.segment(60))
        let report = try StoreVerifier(directory: path, encryption: o.encryption).verify()
        let segment60 = report.problems.filter { $0.file.hasSuffix(FileNames.segment(60)) }
        #expect(!segment60.isEmpty && segment60.allSatisfy { $0.message.contains("fails authentication") }, "\(report.problems)")
    }

    @Test(arguments: ["flip", "short", "missing"])
    func damagedOrMissingIDRefusesTheOpen(change: String) throws {
        let dir = TemporaryDirectory()
        let o = try encryptedOptions(testKey(1))
        let store = try DiskStore(directory: dir.path, options: o)
        try store.setValue(Data("v".utf8), forKey: "k")
        try store.close()
        let idPath = dir.file(StoreIDFile.name)
        switch change {
        case "flip": try flipByte(idPath, at: 20)
        case "short": try truncateFile(idPath, to: 47)
        default: try FileManager.default.removeItem(atPath: idPath)
        }
        let before = try folderDigest(dir.path)
        var readOnly = o
        readOnly.isReadOnly = true
        for options in [o, readOnly] {
            #expect {
                _ = try DiskStore(directory: dir.path, options: options)
            } throws: { error in
                guard case CaskError.storeIDUnusable(let path, _) = error else { return false }
                return path == idPath
            }
        }
        #expect(throws: CaskError.self) { try StoreVerifier(directory: dir.path, encryption: o.encryption).verify() }
        var after = try folderDigest(dir.path)
        after["LOCK"] = before["LOCK"]
        #expect(after == before, "a refused open changed nothing")
    }

    @Test func idFileIsCheckedStrictly() {
        let good = StoreIDFile.encoded(.random(legacyLimit: 3))
        #expect(good.count == 48)
        guard case .valid(let b) = good.withUnsafeBytes(StoreIDFile.parse) else { Issue.record("not valid"); return }
        #expect(b.legacyLimit == 3)
        #expect(StoreIDFile.encoded(b) == good)
        for n in 0..<48 {
            var bad = good
            bad[n] ^= 1
            guard case .damaged = bad.withUnsafeBytes(StoreIDFile.parse) else { Issue.record("byte \(n) changed, still valid"); continue }
        }
        #expect((good + [0]).withUnsafeBytes(StoreIDFile.parse) != .valid(b))
    }

    /// Only encryption makes the file: an unencrypted store seals nothing, and a new encrypted
    /// store has it before its first segment.
    @Test func onlyAnEncryptedStoreGetsAnID() throws {
        let plain = TemporaryDirectory(), sealed = TemporaryDirectory()
        let store = try DiskStore(directory: plain.path, options: options())
        try store.setValue(Data("v".utf8), forKey: "k")
        try store.close()
        #expect(!FileManager.default.fileExists(atPath: plain.file(StoreIDFile.name)))
        try DiskStore(directory: sealed.path, options: try encryptedOptions(testKey(3))).close()
        #expect(FileManager.default.fileExists(atPath: sealed.file(StoreIDFile.name)))
    }
}
