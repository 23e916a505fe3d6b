import Foundation
import Testing
@testable import Cask

/// ``DiskStore/backup(to:)`` and `cask backup` (issue 14): a consistent copy of a live store,
/// cheap (sealed segments hard-linked), that opens as a normal store with every key that was
/// durable when the backup started, and nothing written after.
@Suite struct BackupTests {
    func options() -> StoreOptions {
        var o = StoreOptions()
        o.segmentSize = 16 << 10
        o.compaction.isAutomatic = false
        o.logger.logLevel = .critical
        return o
    }

    func inode(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int) ?? -1
    }

    @Test func aBackupOfALiveStoreHoldsEveryDurableKeyAndNothingLater() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.file("store"), options: options())
        var expected: [String: Data] = [:]
        for i in 0..<2000 {
            let value = Data("value \(i) ".utf8) + Data(repeating: UInt8(i & 0xff), count: 50)
            try store.setValue(value, forKey: "k\(i)")
            expected["k\(i)"] = value
        }
        for i in stride(from: 0, to: 2000, by: 3) { try store.removeValue(forKey: "k\(i)"); expected["k\(i)"] = nil }
        try store.setPinned(true, forKey: "k1")
        let result = try store.backup(to: dir.file("copy"))
        for i in 0..<100 { try store.setValue(Data("after".utf8), forKey: "k\(i)") }   // not in the copy
        try store.setValue(Data("after".utf8), forKey: "new")
        #expect(result.linkedBytes > 0 && result.copiedBytes > 0)

        // Sealed segments are the same files (hard links); the newest is a copy.
        let sealed = try segmentPaths(dir.file("copy")).dropLast()
        #expect(!sealed.isEmpty)
        for path in sealed {
            let name = (path as NSString).lastPathComponent
            #expect(try inode(path) == inode(dir.file("store/\(name)")), "\(name) not linked")
        }

        let copy = try DiskStore(directory: dir.file("copy"), options: options())
        defer { try? copy.close() }
        #expect(copy.count == expected.count)
        for (key, value) in expected { #expect(try copy.value(forKey: key) == value) }
        #expect(try copy.value(forKey: "new") == nil)
        #expect(try copy.metadata(forKey: "k1")?.isPinned == true)
        // The source goes on unharmed.
        #expect(try store.value(forKey: "k5") == Data("after".utf8))
        try store.close()
        #expect(try StoreVerifier(directory: dir.file("copy")).verify().problems.isEmpty)
    }

    @Test func aBackupDuringCompactionsIsComplete() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.file("store"), options: options())
        for i in 0..<1500 { try store.setValue(Data("v\(i)".utf8) + Data(count: 40), forKey: "k\(i % 500)") }
        try store.sync()
        let stop = Locked(false)
        let compactor = Thread {
            while !stop.withLock({ $0 }) { _ = try? store.compact() }
        }
        compactor.start()
        for round in 0..<5 {
            for i in 0..<500 { try store.setValue(Data("r\(round)-\(i)".utf8) + Data(count: 40), forKey: "k\(i)") }
            try store.backup(to: dir.file("copy\(round)"))
            let copy = try DiskStore(directory: dir.file("copy\(round)"), options: options())
            #expect(copy.count == 500)
            for i in 0..<500 { #expect(try copy.value(forKey: "k\(i)") == Data("r\(round)-\(i)".utf8) + Data(count: 40)) }
            try copy.close()
        }
        stop.withLock { $0 = true }
        while compactor.isExecuting { usleep(1000) }
        try store.close()
    }

    @Test func aBackupRefusesAFolderThatIsNotEmpty() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.file("store"), options: options())
        defer { try? store.close() }
        try store.setValue(Data("v".utf8), forKey: "k")
        try FileManager.default.createDirectory(atPath: dir.file("busy"), withIntermediateDirectories: false)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: dir.file("busy/notes.txt")))
        #expect(throws: CaskError.self) { try store.backup(to: dir.file("busy")) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("busy")) == ["notes.txt"])
    }

    @Test func caskBackupCopiesALiveStore() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.file("store"), options: options())
        for i in 0..<800 { try store.setValue(Data("v\(i)".utf8), forKey: "k\(i)") }
        try store.sync()
        store.waitForBackgroundWork()   // sealed segments' hint files are written in the background
        let before = try directoryFingerprint(dir.file("store"))
        let (status, out, err) = try runCask(["backup", dir.file("store"), dir.file("copy")])
        #expect(status == 0 && out.contains("hard-linked"), "\(out) \(err)")
        #expect(try directoryFingerprint(dir.file("store")) == before)
        try store.close()
        let copy = try DiskStore(directory: dir.file("copy"), options: options())
        defer { try? copy.close() }
        #expect(copy.count == 800)
        for i in 0..<800 { #expect(try copy.value(forKey: "k\(i)") == Data("v\(i)".utf8)) }
    }
}
