import Foundation
import Testing
@testable import Cask
import CaskFormat

/// The index snapshot written at a clean close (format-spec.md, "Index snapshot"): the next
/// open reads it instead of the hint files, only while it describes the segments exactly, and
/// never trusts a damaged, stale or foreign one.
@Suite struct IndexSnapshotTests {
    /// A store with overwrites, removes, TTLs and pins over several sealed segments.
    private func makeStore(_ dir: String, clock: ManualClock) throws -> [String: Data] {
        var o = options(segmentSize: 4096, clock: clock.wallClock)
        o.compression = .never
        let store = try DiskStore(directory: dir, options: o)
        var expected: [String: Data] = [:]
        for i in 0..<300 {
            let key = "k\(i % 120)", value = Data(repeating: UInt8(i & 0xff), count: 50 + i % 90)
            try store.setValue(value, forKey: key, timeToLive: i % 7 == 0 ? .seconds(3600) : nil, isPinned: i % 11 == 0)
            expected[key] = value
            if i % 13 == 0 { try store.removeValue(forKey: "k\((i + 5) % 120)"); expected["k\((i + 5) % 120)"] = nil }
        }
        clock.advance(.seconds(90))
        for i in stride(from: 0, to: 120, by: 5) { _ = try store.value(forKey: "k\(i)") }
        try store.close()
        return expected
    }

    private func storeOptions(_ clock: ManualClock) -> StoreOptions {
        var o = options(segmentSize: 4096, clock: clock.wallClock)
        o.compression = .never
        return o
    }

    private func hintFiles(_ dir: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".hint") }.sorted()
    }

    /// Every item, with all of its metadata (access times included).
    private func contents(_ store: DiskStore) throws -> [String: (Data?, ItemMetadata?)] {
        var all: [String: (Data?, ItemMetadata?)] = [:]
        for key in store.keys() { all[key] = (try store.value(forKey: key), try store.metadata(forKey: key)) }
        return all
    }

    @Test func theNextOpenReadsTheSnapshotAndFindsWhatHintsAndScansFind() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let expected = try makeStore(dir.path, clock: clock)
        let snapshotStore = try DiskStore(directory: dir.path, options: storeOptions(clock))
        #expect(snapshotStore.statistics.indexLoadedFromSnapshot)
        #expect(snapshotStore.statistics.segmentsLoadedFromHints == 0 && snapshotStore.statistics.segmentsScanned == 0)
        #expect(!FileManager.default.fileExists(atPath: dir.file("INDEX")), "a writer's open deletes the snapshot")
        let fromSnapshot = try contents(snapshotStore)
        let snapshotStats = snapshotStore.statistics
        try snapshotStore.close()
        try removeIndexSnapshot(dir.path)
        let rebuilt = try DiskStore(directory: dir.path, options: storeOptions(clock))
        #expect(!rebuilt.statistics.indexLoadedFromSnapshot)
        let fromHints = try contents(rebuilt)
        #expect(rebuilt.statistics.liveBytes == snapshotStats.liveBytes && rebuilt.statistics.deadBytes == snapshotStats.deadBytes)
        try rebuilt.close()
        #expect(Set(fromSnapshot.keys) == Set(expected.keys))
        for (key, value) in expected {
            let (got, meta) = try #require(fromSnapshot[key])
            #expect(got == value, "\(key)")
            // The rebuilt index knows the same items, pins, expiries and write times (access
            // times of read items live only in the snapshot).
            var other = try #require(fromHints[key]?.1)
            other.accessDate = meta!.accessDate
            #expect(meta == other, "\(key)")
        }
    }

    /// Expiry times survive the snapshot whichever entry is the first to have one: the first
    /// entry itself (found by the cache model test: a refactor of the loader lost every expiry
    /// when entry 0 had one, so expired items came back after a reopen), a later one, or none.
    @Test(arguments: [0, 2, -1])
    func expiriesSurviveTheSnapshotWhicheverEntryHasTheFirst(_ first: Int) throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let store = try DiskStore(directory: dir.path, options: storeOptions(clock))
        for i in 0..<4 {
            try store.setValue(Data("v\(i)".utf8), forKey: "k\(i)", timeToLive: first >= 0 && i >= first ? .seconds(60) : nil)
        }
        try store.close()
        let reopened = try DiskStore(directory: dir.path, options: storeOptions(clock))
        #expect(reopened.statistics.indexLoadedFromSnapshot)
        for i in 0..<4 {
            let expires = try #require(try reopened.metadata(forKey: "k\(i)")).expirationDate != nil
            #expect(expires == (first >= 0 && i >= first), "k\(i)")
        }
        clock.advance(.seconds(61))
        #expect(try (0..<4).filter { try reopened.value(forKey: "k\($0)") != nil } == Array(0..<(first >= 0 ? first : 4)))
        try reopened.close()
    }

    /// Access times survive a clean close through the snapshot; no hint file is rewritten.
    @Test func accessTimesSurviveACleanCloseWithoutRewritingHints() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        _ = try makeStore(dir.path, clock: clock)
        let hintBytes = try hintFiles(dir).map { try Data(contentsOf: URL(fileURLWithPath: dir.file($0))) }
        clock.advance(.seconds(600))
        let readAt = Date(timeIntervalSince1970: Double(clock.milliseconds) / 1000)
        do {
            let store = try DiskStore(directory: dir.path, options: storeOptions(clock))
            _ = try store.value(forKey: "k1")
            try store.close()
        }
        #expect(try hintFiles(dir).prefix(hintBytes.count).map { try Data(contentsOf: URL(fileURLWithPath: dir.file($0))) } == hintBytes)
        let store = try DiskStore(directory: dir.path, options: storeOptions(clock))
        defer { try? store.close() }
        #expect(store.statistics.indexLoadedFromSnapshot)
        #expect(try store.metadata(forKey: "k1")?.accessDate == readAt)
    }

    /// A snapshot from before later writes, a compaction or a removeAll no longer describes the
    /// segments: it is ignored, and the newest values are read.
    @Test(arguments: ["put", "compact", "removeAll", "truncate"])
    func aStaleSnapshotIsIgnored(change: String) throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        var expected = try makeStore(dir.path, clock: clock)
        let old = try Data(contentsOf: URL(fileURLWithPath: dir.file("INDEX")))
        do {
            let store = try DiskStore(directory: dir.path, options: storeOptions(clock))
            switch change {
            case "put": try store.setValue(Data("new".utf8), forKey: "k0"); expected["k0"] = Data("new".utf8)
            case "compact": _ = try store.compact()
            case "removeAll": try store.removeAll(); expected = [:]
            default: break
            }
            try store.close()
        }
        if change == "truncate" {
            // Same ids, one segment one byte shorter (what a cut tail looks like).
            let newest = try segmentPaths(dir.path).last!
            let size = try FileManager.default.attributesOfItem(atPath: newest)[.size] as! Int
            try truncateFile(newest, to: size - 1)
            try old.write(to: URL(fileURLWithPath: dir.file("INDEX")))
            let store = try DiskStore(directory: dir.path, options: storeOptions(clock))
            #expect(!store.statistics.indexLoadedFromSnapshot)
            try store.close()
            return
        }
        try old.write(to: URL(fileURLWithPath: dir.file("INDEX")))
        let store = try DiskStore(directory: dir.path, options: storeOptions(clock))
        defer { try? store.close() }
        #expect(!store.statistics.indexLoadedFromSnapshot, "\(change)")
        #expect(store.count == expected.count)
        for (k, v) in expected { #expect(try store.value(forKey: k) == v, "\(change): \(k)") }
    }

    /// Any flipped byte, a cut anywhere, or a checksummed snapshot pointing outside its
    /// segments: ignored, and the store opens with every value.
    @Test func aDamagedOrForeignSnapshotIsNeverTrusted() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let expected = try makeStore(dir.path, clock: clock)
        let good = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file("INDEX"))))
        var variants: [[UInt8]] = []
        for at in stride(from: 0, to: good.count, by: max(1, good.count / 150)) { var b = good; b[at] ^= 0x10; variants.append(b) }
        for cut in [0, 7, 48, good.count / 2, good.count - 1] { variants.append(Array(good.prefix(cut))) }
        // Valid checksum, but the first entry's offset points past its segment.
        var foreign = good
        let marks = Int(good.withUnsafeBytes { $0.u32(12) }), slots = Int(good.withUnsafeBytes { $0.u64(56) })
        let firstEntry = IndexSnapshot.headerSize + marks * IndexSnapshot.markSize + slots * IndexSnapshot.slotSize
        foreign.withUnsafeMutableBytes { $0.put(UInt32.max - 100, at: firstEntry + 12) }
        let end = foreign.count - 8
        let crc = foreign.withUnsafeBytes { CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[..<end]))) }
        foreign.withUnsafeMutableBytes { $0.put(crc, at: end) }
        variants.append(foreign)
        // Valid checksum, but a slot names an entry that does not exist.
        var badSlot = good
        let header = IndexSnapshot.headerSize + marks * IndexSnapshot.markSize
        let occupied = try #require((0..<slots).first { n in badSlot.withUnsafeBytes { $0.u64(header + n * 8) } != 0 })
        badSlot.withUnsafeMutableBytes { $0.put(UInt64(0xFFFF_FFFF), at: header + occupied * 8) }
        let crc2 = badSlot.withUnsafeBytes { CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[..<end]))) }
        badSlot.withUnsafeMutableBytes { $0.put(crc2, at: end) }
        variants.append(badSlot)
        // Valid checksum, but a slot's fingerprint is not its key's (found by the open() fuzzer:
        // the entry could not be reached by its key, and removing another key trapped).
        var badFingerprint = good
        let fingerprinted = badFingerprint.withUnsafeBytes { $0.u64(header + occupied * 8) }
        badFingerprint.withUnsafeMutableBytes { $0.put(fingerprinted ^ (0x5A5A_5A5A << 32), at: header + occupied * 8) }
        let crc3 = badFingerprint.withUnsafeBytes { CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[..<end]))) }
        badFingerprint.withUnsafeMutableBytes { $0.put(crc3, at: end) }
        variants.append(badFingerprint)
        // Valid checksum, but another snapshot version (version 1 had 48-byte entries).
        for version in [UInt32(1), IndexSnapshot.version + 1] {
            var other = good
            other.withUnsafeMutableBytes { $0.put(version, at: 8) }
            let crc4 = other.withUnsafeBytes { CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[..<end]))) }
            other.withUnsafeMutableBytes { $0.put(crc4, at: end) }
            variants.append(other)
        }
        let work = TemporaryDirectory()
        for (n, bytes) in variants.enumerated() {
            let copy = work.file("v\(n)")
            try copyStore(dir.path, to: copy)
            try Data(bytes).write(to: URL(fileURLWithPath: copy + "/INDEX"))
            let store = try DiskStore(directory: copy, options: storeOptions(clock))
            #expect(!store.statistics.indexLoadedFromSnapshot, "variant \(n)")
            #expect(store.count == expected.count, "variant \(n)")
            for (k, v) in expected { #expect(try store.value(forKey: k) == v, "variant \(n): \(k)") }
            for k in expected.keys { try store.removeValue(forKey: k) }
            #expect(store.count == 0, "variant \(n)")
            try store.close()
        }
    }

    /// Bitrot in the last bytes of the newest segment after a clean close costs only the damaged
    /// key (not a torn-tail cut of every later record, nor the salvage bound), and the key stays
    /// gone: a tombstone hides its older value, with or without the snapshot.
    @Test func damageInASegmentsTailCostsOnlyTheDamagedKey() throws {
        let dir = TemporaryDirectory()
        var o = options()
        o.compression = .never
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            try store.setValue(Data("old".utf8), forKey: "k5")
            for i in 0..<60 { try store.setValue(Data(repeating: 1, count: 100), forKey: "filler\(i)") }
            for i in 0..<10 { try store.setValue(Data(repeating: UInt8(i), count: 100), forKey: "k\(i)") }
            try store.close()
        }
        let segment = try #require(try segmentPaths(dir.path).last)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
        // k5's new value: the only run of 100 bytes of 5s.
        let at = try #require(bytes.firstRange(of: Data(repeating: 5, count: 100))).lowerBound + 50
        try flipByte(segment, at: at)
        for round in ["snapshot", "after a reopen without it"] {
            if round != "snapshot" { try removeIndexSnapshot(dir.path) }
            let store = try DiskStore(directory: dir.path, options: o)
            if round == "snapshot" {
                #expect(store.statistics.indexLoadedFromSnapshot)
                #expect(store.statistics.corruptRecords == 1)
            }
            #expect(try store.value(forKey: "k5") == nil, "\(round)")
            if round == "snapshot" {
                for i in 0..<10 where i != 5 { #expect(try store.value(forKey: "k\(i)") == Data(repeating: UInt8(i), count: 100), "k\(i)") }
                for i in 0..<60 { #expect(try store.value(forKey: "filler\(i)") != nil, "filler\(i)") }
            } else {
                // Without the snapshot the damaged (now sealed) segment is scanned: the salvage
                // rule may drop older keys, but no key comes back wrong, and later ones survive.
                for i in 0..<10 where i != 5 {
                    let got = try store.value(forKey: "k\(i)")
                    #expect(got == nil || got == Data(repeating: UInt8(i), count: 100), "\(round): k\(i)")
                }
                for i in 6..<10 { #expect(try store.value(forKey: "k\(i)") != nil, "\(round): k\(i)") }
            }
            try store.close()
        }
    }

    /// A read-only open uses the snapshot too, and leaves it in place.
    @Test func aReaderUsesTheSnapshotAndKeepsIt() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let expected = try makeStore(dir.path, clock: clock)
        var o = storeOptions(clock)
        o.isReadOnly = true
        let reader = try DiskStore(directory: dir.path, options: o)
        #expect(reader.statistics.indexLoadedFromSnapshot)
        for (k, v) in expected { #expect(try reader.value(forKey: k) == v) }
        try reader.close()
        #expect(FileManager.default.fileExists(atPath: dir.file("INDEX")))
    }

    /// Close does not wait for a running compaction pass to finish: the pass stops at its next
    /// step, removes its partial output, and nothing is lost.
    @Test func closeStopsARunningCompactionPass() throws {
        let dir = TemporaryDirectory()
        let fs = HookedFileSystem()
        var o = options(segmentSize: 4096)
        o.compression = .never
        o.fileSystem = fs
        let store = try DiskStore(directory: dir.path, options: o)
        var expected: [String: Data] = [:]
        for i in 0..<400 {
            let v = Data(repeating: UInt8(i & 0xff), count: 100)
            try store.setValue(v, forKey: "k\(i % 100)")
            expected["k\(i % 100)"] = v
        }
        let started = DispatchSemaphore(value: 0)
        fs.beforeOpen = { path in
            guard path.hasSuffix(".cask.tmp") else { return }
            started.signal()
            while !store.closing.isCancelled { usleep(1000) }
        }
        let result = Locked<Result<CompactionReport, CaskError>?>(nil)
        let thread = Thread { result.withLock { $0 = Result { () throws(CaskError) in try store.compact() } } }
        thread.start()
        started.wait()
        try store.close()
        while result.withLock({ $0 }) == nil { usleep(1000) }
        #expect(throws: CaskError.closed) { try result.withLock { $0 }!.get() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".tmp") }.isEmpty)
        fs.beforeOpen = { _ in }
        let reopened = try DiskStore(directory: dir.path, options: o)
        defer { try? reopened.close() }
        #expect(reopened.count == expected.count)
        for (k, v) in expected { #expect(try reopened.value(forKey: k) == v) }
    }
}
