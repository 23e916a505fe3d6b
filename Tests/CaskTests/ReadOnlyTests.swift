import Foundation
import Testing
@testable import Cask

/// Every file of a directory: name, bytes' checksum, size and modification time.
func directoryFingerprint(_ path: String) throws -> [String: String] {
    var result: [String: String] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: path) {
        let file = path + "/" + name
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
        let sum = bytes.reduce(into: UInt64(14_695_981_039_346_656_037)) { $0 = ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
        let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        result[name] = "\(bytes.count) \(sum) \(modified)"
    }
    return result
}

/// Whether this process can run a command as user `nobody` (it runs as root).
let canRunAsNobody = getuid() == 0 && shellSucceeds("setpriv --reuid=65534 --regid=65534 --clear-groups true")
/// Whether an unprivileged user namespace can make a read-only bind mount.
let canBindReadOnly = shellSucceeds("d=$(mktemp -d); unshare -rm sh -c \"mount --bind $d $d && mount -o remount,bind,ro $d\" 2>/dev/null; r=$?; rmdir $d; exit $r")

/// ``StoreOptions/isReadOnly`` and the read verbs of `cask` (issue 14): a reader never changes a
/// byte of the store, opens beside a writer, and sees only values that were written.
@Suite struct ReadOnlyTests {
    func readOnly() -> StoreOptions {
        var o = StoreOptions()
        o.isReadOnly = true
        o.logger.logLevel = .critical
        return o
    }

    /// A reader counts the hint files as a writer does, whether it loads the index snapshot or
    /// the hint files (`cask stats` showed "hint no" and left them out of the file bytes).
    @Test(arguments: [true, false])
    func aReaderSeesTheHintFiles(fromSnapshot: Bool) throws {
        let dir = TemporaryDirectory()
        let writer = try DiskStore(directory: dir.path, options: options(segmentSize: 4096))
        for i in 0..<200 { try writer.setValue(Data(repeating: UInt8(i), count: 100), forKey: "k\(i)") }
        try writer.close()
        if !fromSnapshot { try FileManager.default.removeItem(atPath: dir.path + "/" + IndexSnapshot.fileName) }
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        let hinted = files.filter { $0.hasSuffix(".hint") }.compactMap { UInt32($0.prefix(10)) }.sorted()
        let onDisk = try files.filter { $0.hasSuffix(".hint") || $0.hasSuffix(".cask") }.reduce(0) {
            $0 + ((try FileManager.default.attributesOfItem(atPath: dir.path + "/" + $1)[.size] as? Int) ?? 0)
        }
        let reader = try DiskStore(directory: dir.path, options: readOnly())
        #expect(reader.statistics.indexLoadedFromSnapshot == fromSnapshot)
        #expect(hinted.count >= 3)
        #expect(reader.segmentInfo().filter(\.hasHint).map(\.id) == hinted)
        #expect(reader.fileBytes == onDisk)
        try reader.close()
    }

    /// A store with overwrites, removes, a pin, a TTL, several segments, and a torn tail
    /// (garbage after the last record of the newest segment).
    func makeStore(_ path: String) throws -> [String: Data] {
        var o = StoreOptions()
        o.segmentSize = 4096
        o.compaction.isAutomatic = false
        let store = try DiskStore(directory: path, options: o)
        var expected: [String: Data] = [:]
        for i in 0..<120 {
            let value = Data("value \(i) ".utf8) + Data(repeating: UInt8(i), count: 60)
            try store.setValue(value, forKey: "k\(i)", timeToLive: i == 7 ? .seconds(3600) : nil, isPinned: i == 8)
            expected["k\(i)"] = value
        }
        for i in stride(from: 0, to: 120, by: 5) { try store.removeValue(forKey: "k\(i)"); expected["k\(i)"] = nil }
        try store.close()
        let newest = try segmentPaths(path).last!
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: newest))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0xAB, count: 57))
        try handle.close()
        return expected
    }

    @Test func aReadOnlyOpenReadsEverythingAndChangesNoByte() throws {
        let dir = TemporaryDirectory()
        let expected = try makeStore(dir.path)
        let before = try directoryFingerprint(dir.path)
        let store = try DiskStore(directory: dir.path, options: readOnly())
        #expect(store.count == expected.count)
        for (key, value) in expected { #expect(try store.value(forKey: key) == value) }
        #expect(try store.value(forKey: "k0") == nil)
        #expect(try store.metadata(forKey: "k8")?.isPinned == true)
        #expect(store.statistics.tornTailBytes == 57)
        #expect(try !store.allMetadata().isEmpty && store.keys().count == expected.count)
        try store.sync()
        try store.close()
        #expect(try directoryFingerprint(dir.path) == before)
    }

    @Test func everyChangeIsRefusedWithATypedError() throws {
        let dir = TemporaryDirectory()
        _ = try makeStore(dir.path)
        let before = try directoryFingerprint(dir.path)
        let store = try DiskStore(directory: dir.path, options: readOnly())
        let refusals: [(String, () throws(CaskError) -> Void)] = [
            ("setValue", { () throws(CaskError) in try store.setValue(Data([1]), forKey: "new") }),
            ("removeValue", { () throws(CaskError) in _ = try store.removeValue(forKey: "k1") }),
            ("removeAll", { () throws(CaskError) in try store.removeAll() }),
            ("compact", { () throws(CaskError) in _ = try store.compact() }),
            ("trim(toCount:)", { () throws(CaskError) in try store.trim(toCount: 1) }),
            ("trim(toSize:)", { () throws(CaskError) in try store.trim(toSize: 1) }),
            ("removeExpired", { () throws(CaskError) in _ = try store.removeExpired() }),
            ("setPinned", { () throws(CaskError) in _ = try store.setPinned(true, forKey: "k1") }),
        ]
        for (name, call) in refusals {
            do throws(CaskError) {
                try call()
                Issue.record("\(name) changed a read-only store")
            } catch {
                #expect(error == .readOnly(path: dir.path), "\(name): \(error)")
                #expect(error.description.contains(dir.path) && error.description.contains("read-only"))
            }
        }
        #expect(store.count > 0)
        try store.close()
        #expect(try directoryFingerprint(dir.path) == before)
    }

    @Test func aFolderThatIsNotAStoreIsRefusedAndNothingIsCreated() throws {
        let dir = TemporaryDirectory()
        let empty = dir.file("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        #expect(throws: CaskError.noStoreYet(path: empty)) { try DiskStore(directory: empty, options: readOnly()) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
        let missing = dir.file("missing")
        #expect(throws: CaskError.noStoreYet(path: missing)) { try DiskStore(directory: missing, options: readOnly()) }
        #expect(!FileManager.default.fileExists(atPath: missing))
        #expect(CaskError.noStoreYet(path: missing).description.contains("open it once for writing"))
        let foreign = dir.file("foreign")
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: false)
        try Data("x".utf8).write(to: URL(fileURLWithPath: foreign + "/notes.txt"))
        #expect(throws: CaskError.notACaskStore(file: foreign + "/notes.txt")) { try DiskStore(directory: foreign, options: readOnly()) }
    }

    /// A writer holds the store; a reader opens beside it, sees what was synced, and after a
    /// refresh sees later writes and no removed key; the writer's compaction deleting segments
    /// the reader still holds does not disturb the reader's values.
    @Test func aReaderBesideAWriterSeesSyncedWritesAfterRefresh() throws {
        let dir = TemporaryDirectory()
        var o = StoreOptions()
        o.segmentSize = 4096
        o.compaction.isAutomatic = false
        let writer = try DiskStore(directory: dir.path, options: o)
        for i in 0..<100 { try writer.setValue(Data("a\(i)".utf8), forKey: "k\(i)") }
        try writer.sync()
        let reader = try DiskStore(directory: dir.path, options: readOnly())
        #expect(reader.count == 100)
        #expect(try reader.value(forKey: "k5") == Data("a5".utf8))

        for i in 0..<100 { try writer.setValue(Data("b\(i)".utf8), forKey: "k\(i)") }
        try writer.removeValue(forKey: "k7")
        try writer.sync()
        #expect(try writer.compact().segmentsCompacted > 0)
        // Not refreshed yet: the snapshot of the open, read through descriptors of deleted files.
        #expect(try reader.value(forKey: "k5") == Data("a5".utf8))
        #expect(try reader.value(forKey: "k7") == Data("a7".utf8))

        try reader.refresh()
        #expect(try reader.value(forKey: "k5") == Data("b5".utf8))
        #expect(try reader.value(forKey: "k7") == nil)
        #expect(reader.count == 99)
        try reader.close()
        try writer.close()
    }

    /// The facade over a read-only disk layer: reads work, writes throw, `refresh()` sees the
    /// writer's later syncs and memory never answers with a replaced value.
    /// Regression (the multi-process soak found it in CI): a compaction deletes its inputs one by
    /// one. Here the inputs are a log segment holding a tombstone and a compacted segment (a
    /// higher id, deleted later) holding the value it hid; the output keeps neither. A reader
    /// that listed the directory between the two deletions would see the value without its
    /// tombstone. A reader opens at each deletion (on another thread, while the writer waits for
    /// it up to 300 ms) and must not see the value: the lock file's deletion generation makes it
    /// wait for the deletions to end.
    @Test func aReaderNeverSeesACompactionsInputsHalfDeleted() throws {
        let dir = TemporaryDirectory()
        let fs = HookedFileSystem()
        let writer = try DiskStore(directory: dir.path, options: removedVictimOptions(fs))
        try prepareRemovedVictim(writer)

        let seen = Locked<[String]>([])
        let deletions = Locked(0)
        fs.beforeRemove = { path in
            guard path.hasSuffix(".cask") else { return }
            deletions.withLock { $0 += 1 }
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let reader = try? DiskStore(directory: dir.path, options: self.readOnly())
                let value = (try? reader?.value(forKey: "victim")).flatMap { $0 }
                seen.withLock { $0.append(value.map { String(decoding: $0, as: UTF8.self) } ?? (reader == nil ? "no open" : "absent")) }
                done.signal()
            }
            _ = done.wait(timeout: .now() + .milliseconds(300))
        }
        let report = try writer.compact()
        fs.beforeRemove = { _ in }
        #expect(report.tombstonesDropped >= 1 && deletions.withLock { $0 } >= 2)
        for _ in 0..<100 where seen.withLock({ $0.count }) < deletions.withLock({ $0 }) { usleep(20_000) }
        #expect(seen.withLock { $0 }.count == deletions.withLock { $0 })
        #expect(seen.withLock { $0 }.allSatisfy { $0 == "absent" }, "\(seen.withLock { $0 })")
        try writer.close()
    }

    /// The lock file's deletion generation, as readers meet it: a `LOCK` holding only a pid (an
    /// earlier version's, or a backup's copy) has none and is ignored; an odd one left by a writer
    /// that died mid-deletion (nobody holds the lock) makes a reader wait about 100 ms, not fail.
    @Test func readersOpenBesideAnOldOrAbandonedLockFile() throws {
        let dir = TemporaryDirectory()
        var o = StoreOptions()
        o.logger.logLevel = .critical
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            try store.setValue(Data("v".utf8), forKey: "k")
            try store.close()
        }
        let lock = dir.file("LOCK")
        let written = try Data(contentsOf: URL(fileURLWithPath: lock))
        #expect(written.count == 40 && written.prefix(written.firstIndex(of: 0x0A)!).allSatisfy { (0x30...0x39).contains($0) })
        try Data("4242\n".utf8).write(to: URL(fileURLWithPath: lock))
        #expect(try DiskStore(directory: dir.path, options: readOnly()).value(forKey: "k") == Data("v".utf8))
        var abandoned = written
        abandoned[32] |= 1   // odd: "deleting"
        try abandoned.write(to: URL(fileURLWithPath: lock))
        let start = Date()
        #expect(try DiskStore(directory: dir.path, options: readOnly()).value(forKey: "k") == Data("v".utf8))
        #expect(Date().timeIntervalSince(start) < 5)
        // A writer's open goes on from the generation it finds, even (deletions done).
        let writer = try DiskStore(directory: dir.path, options: o)
        let now = try Data(contentsOf: URL(fileURLWithPath: lock))
        let generation = now[32..<40].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let before = abandoned[32..<40].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(generation > before && generation % 2 == 0)
        try writer.close()
    }

    @Test func aReadOnlyCacheReadsRefreshesAndRefusesWrites() throws {
        let dir = TemporaryDirectory()
        let writer = try CaskCache(directory: dir.path)
        try writer.setValue(["a": 1], forKey: "k")
        try writer.sync()
        var o = CacheOptions()
        o.disk.isReadOnly = true
        let reader = try CaskCache(directory: dir.path, options: o)
        #expect(try reader.value([String: Int].self, forKey: "k") == ["a": 1])
        #expect(try reader.value([String: Int].self, forKey: "k") == ["a": 1])   // now a memory hit
        #expect(throws: CaskError.readOnly(path: dir.path)) { try reader.setValue(["b": 2], forKey: "k") }
        try writer.setValue(["a": 2], forKey: "k")
        try writer.sync()
        try reader.refresh()
        #expect(try reader.value([String: Int].self, forKey: "k") == ["a": 2])
        try reader.close()
        try writer.close()
    }

    // MARK: The cask tool

    @Test func readVerbsWorkOnALiveStoreAndChangeNothing() throws {
        let dir = TemporaryDirectory()
        var o = StoreOptions()
        o.compaction.isAutomatic = false
        let writer = try DiskStore(directory: dir.path, options: o)
        for i in 0..<50 { try writer.setValue(Data("v\(i)".utf8), forKey: "k\(i)") }
        try writer.sync()
        writer.waitForBackgroundWork()
        let before = try directoryFingerprint(dir.path)
        for arguments in [["get", dir.path, "k3"], ["ls", dir.path], ["ls", dir.path, "--json"], ["stats", dir.path], ["verify", dir.path]] {
            let (status, out, err) = try runCask(arguments)
            #expect(status == 0, "\(arguments): \(err)")
            if arguments[0] == "get" { #expect(out == "v3") }
            if arguments[0] == "ls" { #expect(out.contains("k49")) }
        }
        #expect(try directoryFingerprint(dir.path) == before)
        try writer.close()
    }

    @Test func verbsOnAFolderThatIsNotAStoreCreateNothing() throws {
        let dir = TemporaryDirectory()
        for verb in [["get", "k"], ["ls"], ["stats"], ["verify"], ["rm", "k"], ["compact"], ["trim", "--count", "1"], ["pin", "k"]] {
            let (status, _, err) = try runCask([verb[0], dir.path] + verb.dropFirst())
            #expect(status == 3, "\(verb): \(err)")
            #expect(err.contains(dir.path), "\(verb): \(err)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty, "\(verb) created files")
        }
    }

    @Test(.enabled(if: canRunAsNobody, "needs root to run cask as user nobody"))
    func readVerbsWorkOnAStoreThatTheUserCannotWrite() throws {
        let dir = TemporaryDirectory()
        let expected = try makeStore(dir.path)
        try letOthersRead(dir.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: dir.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path) }
        let before = try directoryFingerprint(dir.path)
        guard let cask = caskExecutable() else { Issue.record("cask not built"); return }
        let asNobody = "setpriv --reuid=65534 --regid=65534 --clear-groups \(cask)"
        let (getStatus, value) = try runShell("\(asNobody) get \(dir.path) k3 2>/dev/null")
        #expect(getStatus == 0 && value == String(decoding: expected["k3"]!, as: UTF8.self), "\(value)")
        for verb in ["ls", "stats", "verify"] {
            let (status, out) = try runShell("\(asNobody) \(verb) \(dir.path)")
            #expect(status == 0 || (verb == "verify" && status == 1), "\(verb): \(out)")
        }
        #expect(try directoryFingerprint(dir.path) == before)
    }

    @Test(.enabled(if: canBindReadOnly, "needs unshare -rm (user namespaces)"))
    func readVerbsWorkOnAReadOnlyBindMount() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: false)
        let expected = try makeStore(store)
        let before = try directoryFingerprint(store)
        guard let cask = caskExecutable() else { Issue.record("cask not built"); return }
        let (status, out) = try runShell(
            "unshare -rm sh -c 'mount --bind \(store) \(store) && mount -o remount,bind,ro \(store) && touch \(store)/probe 2>/dev/null && echo WRITABLE; \(cask) get \(store) k4 2>/dev/null && \(cask) ls \(store) > /dev/null && \(cask) stats \(store) > /dev/null'")
        #expect(status == 0 && !out.contains("WRITABLE"), "\(out)")
        #expect(out.hasPrefix(String(decoding: expected["k4"]!, as: UTF8.self)), "\(out)")
        #expect(try directoryFingerprint(store) == before)
    }
}
