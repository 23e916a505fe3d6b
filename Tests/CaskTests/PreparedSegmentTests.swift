import Foundation
import Testing
import CaskFormat
import CaskTesting
@testable import Cask

/// The rollover behind a gate (format-spec.md, "Rollover", and recovery steps 2 and 6): a crash
/// can leave the next segment prepared (only its header) while the active one still has
/// unsynced bytes.
@Suite struct PreparedSegmentTests {
    /// The header-only segment is removed and the segment before it is the newest again: its
    /// torn tail is cut, and the salvage rule, with the prepared segment's high
    /// `minimumSequence` as its bound, does not drop every key.
    @Test func aPreparedSegmentLeftByACrashLeavesTheTornTailRuleToTheOneBefore() throws {
        let dir = TemporaryDirectory()
        let o = options()
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            for i in 0..<50 { try store.setValue(Data("v\(i)".utf8), forKey: "k\(i)") }
            try store.close()
        }
        let active = try segmentPaths(dir.path).last!
        try? FileManager.default.removeItem(atPath: dir.path + "/INDEX")
        for hint in try FileManager.default.contentsOfDirectory(atPath: dir.path) where hint.hasSuffix(".hint") {
            try FileManager.default.removeItem(atPath: dir.path + "/" + hint)
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: active))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 21))   // a record cut short
        try handle.close()
        let id = UInt32(URL(fileURLWithPath: active).deletingPathExtension().lastPathComponent)! + 1
        let header = SegmentHeader(id: UInt64(id), kind: .log, flags: 0, minimumSequence: 1_000_000, sequenceLimit: 0)
        let prepared = dir.path + "/" + FileNames.segment(id)
        #expect(FileManager.default.createFile(atPath: prepared, contents: Data(header.encoded())))

        // The independent reader applies the same rules (it only reads).
        let reader = repositoryRoot.appendingPathComponent("tools/caskdump.py").path
        let (status, out) = try runShell("python3 \(reader) \(dir.path) --json")
        #expect(status == 0)
        struct Item: Decodable { var key: String }
        #expect(try JSONDecoder().decode([Item].self, from: Data(out.utf8)).count == 50)

        let store = try DiskStore(directory: dir.path, options: o)
        defer { try? store.close() }
        #expect(store.statistics.tornTailBytes == 21)
        #expect(store.statistics.keysDroppedByRecovery == 0)
        for i in 0..<50 { #expect(try store.value(forKey: "k\(i)") == Data("v\(i)".utf8)) }
        #expect(!FileManager.default.fileExists(atPath: prepared))
        // Sequence numbers stay above the removed segment's minimumSequence.
        #expect(store.state.withLock { $0.numbers.nextSequence } >= 1_000_000)
    }

    /// Many background rollovers (1 MiB segments, values written while each sealed segment's
    /// sync is pending behind the gate) lose nothing, before and after a reopen.
    @Test func valuesWrittenBehindTheGateReadBackAndSurviveAReopen() throws {
        let dir = TemporaryDirectory()
        var o = StoreOptions()
        o.segmentSize = 1 << 20
        o.durability = .none
        o.logger.logLevel = .critical
        let value = { (i: Int) in Data((0..<600).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }) }
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            for i in 0..<12_000 {
                try store.setValue(value(i), forKey: "k\(i)")
                if i % 997 == 0 { #expect(try store.value(forKey: "k\(i)") == value(i)) }
            }
            #expect(try segmentPaths(dir.path).count >= 4)
            try store.close()
        }
        let store = try DiskStore(directory: dir.path, options: o)
        defer { try? store.close() }
        for i in stride(from: 0, to: 12_000, by: 7) { #expect(try store.value(forKey: "k\(i)") == value(i)) }
    }
}

/// Close writes the hint of every sealed segment still queued (format-spec.md, "Close"; with
/// 1 MiB segments most are sealed behind the gate, whose hint waits for the sealed segment's
/// sync), so that the next open reads hints, not segments.
@Suite struct CloseHintTests {
    @Test func closeLeavesAHintForEverySealedSegment() throws {
        let dir = TemporaryDirectory()
        var o = StoreOptions()
        o.segmentSize = 1 << 20
        o.durability = .none
        o.compaction.isAutomatic = false
        o.logger.logLevel = .critical
        o.compression = .never
        let value = Data((0..<900).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            for i in 0..<5_000 { try store.setValue(value, forKey: "k\(i)") }
            try store.close()   // at once: hints of the last seals may still be queued
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        let segments = names.filter { $0.hasSuffix(".cask") }.sorted()
        #expect(segments.count >= 4)
        for segment in segments.dropLast() {   // the newest is the active one: the snapshot stands for it
            let hint = segment.replacingOccurrences(of: ".cask", with: ".hint")
            #expect(names.contains(hint), "no hint for \(segment): \(names.sorted())")
        }
        let reopened = try DiskStore(directory: dir.path, options: o)
        defer { try? reopened.close() }
        #expect(reopened.statistics.segmentsScanned == 0)
        #expect(reopened.count == 5_000)
    }
}

/// The gate's sync (format-spec.md, "Rollover"): it runs once, whoever asks; a failure is never
/// retried and trusted, and every write that needs the gate throws it.
@Suite struct PredecessorSyncTests {
    @Test func aFailedSyncIsNeverRetriedAndKeepsTheGateShut() throws {
        let dir = TemporaryDirectory()
        let fs = FaultyFileSystem(wrapping: POSIXFileSystem())
        let sealedPath = dir.file("0000000001.cask"), nextPath = dir.file("0000000002.cask")
        let sealed = SegmentFile(id: 1, path: sealedPath, handle: try fs.open(sealedPath, mode: .createTruncate), fileSystem: fs)
        let next = SegmentFile(id: 2, path: nextPath, handle: try fs.open(nextPath, mode: .createTruncate), fileSystem: fs)
        let gate = PredecessorSync(file: sealed)
        fs.inject(.init(operation: .sync, at: 1, errno: EIO))   // the first fsync fails, later ones would not
        #expect(throws: CaskError.self) { try gate.sync() }
        #expect(throws: CaskError.self) { try gate.sync() }   // the same error, not a second fsync
        #expect(fs.calls(.sync) == 1)
        #expect(!gate.isDurable)

        var writer = SegmentWriter(file: next, size: 0, bufferCapacity: 64, writesBehind: true)
        writer.predecessor = gate
        #expect(writer.isGated)
        let key = Data("k".utf8), value = Data(repeating: 1, count: 10)
        let header = RecordHeader(sequence: 1, writeTime: 0, expiry: 0, kind: .value, flags: 0,
                                  keyLength: key.count, storedLength: value.count, originalLength: value.count)
        _ = try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try writer.append(header, key: k, value: v) } }
        #expect(throws: CaskError.self) { try writer.flush() }   // nothing of the next segment reaches its file
        #expect(try fs.size(next.handle) == 0)
    }

    @Test func aSuccessfulSyncRunsOnceForEveryone() throws {
        let dir = TemporaryDirectory()
        let fs = FaultyFileSystem(wrapping: POSIXFileSystem())
        let path = dir.file("0000000001.cask")
        let gate = PredecessorSync(file: SegmentFile(id: 1, path: path, handle: try fs.open(path, mode: .createTruncate), fileSystem: fs))
        DispatchQueue.concurrentPerform(iterations: 8) { _ in try? gate.sync() }   // harmless: checked below
        #expect(gate.isDurable)
        #expect(fs.calls(.sync) == 1)
        try gate.sync()
        #expect(fs.calls(.sync) == 1)
    }
}
