import CaskTesting
import Foundation
import Testing
@testable import Cask

/// A failed read is never damage (format-spec.md, "A failed read is never damage"): an open,
/// read, scrub or compaction whose read fails throws a typed I/O error and changes nothing,
/// whichever read fails and however often. Each test compares against the same store opened
/// without faults: a faulted attempt followed by a clean open must end exactly where the clean
/// open alone ends (damage included: the same keys dropped, and no more).
@Suite struct ReadFaultTests {
    /// The states an open starts from, each reaching other read paths.
    enum Shape: String, CaseIterable {
        /// Closed cleanly: the index snapshot is loaded (tail checksums, sections on two threads).
        case snapshot
        /// A byte flipped in a sealed segment's last 4 KiB after the snapshot: its changed tail
        /// is checked record by record (one key is really damaged).
        case snapshotWithChangedTail
        /// No snapshot: every sealed segment loads from its hint file.
        case hints
        /// No snapshot, one damaged record in a sealed segment: its intact hint says exactly what
        /// was lost (without the hint, the salvage rule would drop more).
        case hintsWithDamage
        /// No snapshot and no hint files: every segment is scanned.
        case scan
    }

    /// A store of 60 keys in several 16 KiB segments, shaped as `shape`.
    static func makeStore(_ shape: Shape, in dir: TemporaryDirectory) throws -> String {
        let path = dir.file("base")
        let store = try DiskStore(directory: path, options: options(segmentSize: 16 << 10))
        var rng = SeededBytes(seed: 25)
        for i in 0..<90 { try store.setValue(rng.compressible(300 + Int(rng.next() % 900)), forKey: "k\(i % 60)") }
        let locations = recordLocations(store)
        store.waitForBackgroundWork()
        try store.close()
        let sealed = try segmentPaths(path).dropLast()
        let victim = try #require(locations.filter { "\(path)/\(FileNames.segment($0.value.0))" == sealed.first }.min { $0.value.1 > $1.value.1 })
        let victimSegment = "\(path)/\(FileNames.segment(victim.value.0))"
        switch shape {
        case .snapshot: break
        case .snapshotWithChangedTail: try flipByte(victimSegment, at: victim.value.1 + victim.value.2 - 2)
        case .hints: try removeIndexSnapshot(path)
        case .hintsWithDamage:
            try removeIndexSnapshot(path)
            try flipByte(victimSegment, at: victim.value.1 + victim.value.2 - 2)
        case .scan:
            try removeIndexSnapshot(path)
            for hint in try FileManager.default.contentsOfDirectory(atPath: path) where hint.hasSuffix(".hint") {
                try FileManager.default.removeItem(atPath: "\(path)/\(hint)")
            }
        }
        return path
    }

    /// Every key and value of the store in `path`, opened without faults.
    static func contents(_ path: String) throws -> [String: Data] {
        let store = try DiskStore(directory: path, options: options())
        defer { try? store.close() }
        var all: [String: Data] = [:]
        for key in store.keys() { all[key] = try store.value(forKey: key) }
        return all
    }

    /// The calls of `operation` a fault-free open of a copy of `source` makes.
    static func callsInOpen(_ operation: FaultyFileSystem.Operation, _ source: String, dir: TemporaryDirectory) throws -> Int {
        try copyStore(source, to: dir.file("count"))
        let faulty = FaultyFileSystem(wrapping: POSIXFileSystem())
        faulty.inject(.init(operation: operation, at: Int.max))
        var o = options()
        o.fileSystem = faulty
        let store = try DiskStore(directory: dir.file("count"), options: o)
        let calls = faulty.calls(operation)
        try store.close()
        return calls
    }

    /// Opens a copy of `source` with the given calls failing (each once, or the last from then
    /// on); whatever the open did, a clean open afterwards must hold exactly `expected`.
    static func checkOpen(_ source: String, failing operation: FaultyFileSystem.Operation, at calls: [Int], forever: Bool,
                          expected: [String: Data], dir: TemporaryDirectory) throws -> Bool {
        let copy = dir.file("copy-\(operation)-\(calls)-\(forever)")
        try copyStore(source, to: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let faulty = FaultyFileSystem(wrapping: POSIXFileSystem())
        for (n, at) in calls.enumerated() {
            faulty.inject(.init(operation: operation, at: at, errno: EIO, forever: forever && n == calls.count - 1))
        }
        var o = options()
        o.fileSystem = faulty
        var failed = false
        do {
            let store = try DiskStore(directory: copy, options: o)
            faulty.clear()
            try store.close()
        } catch {
            let text = "\(error)"
            #expect(Self.isInjectedEIO(error), "open failed with \(text), not the injected EIO")
            #expect(text.contains(copy), "the message names the file: \(text)")
            failed = true
        }
        #expect(try contents(copy) == expected, "\(operation) calls \(calls) failing (forever: \(forever)) changed the store")
        return failed
    }

    static func isInjectedEIO(_ error: any Error) -> Bool {
        if case .io(_, _, let code)? = error as? CaskError { return code == EIO }
        return false
    }

    @Test(arguments: Shape.allCases)
    func aFailedReadInAnOpenThrowsAndChangesNothing(_ shape: Shape) throws {
        let dir = TemporaryDirectory()
        let source = try Self.makeStore(shape, in: dir)
        try copyStore(source, to: dir.file("reference"))
        let expected = try Self.contents(dir.file("reference"))
        #expect(expected.count >= (shape == .snapshot || shape == .hints || shape == .scan ? 60 : 50))
        for operation in [FaultyFileSystem.Operation.read, .open, .size] {
            let calls = try Self.callsInOpen(operation, source, dir: dir)
            var failedOpens = 0
            for at in 1...(calls + 1) {
                // One failing call, or two (a failed read that leads open down another path,
                // then a failed read on that path), or every call from one on.
                var patterns: [([Int], Bool)] = [([at], false), ([at], true)]
                patterns += (1...(operation == .read ? 12 : 3)).map { ([at, at + $0], false) }
                for (failing, forever) in patterns {
                    if try Self.checkOpen(source, failing: operation, at: failing, forever: forever, expected: expected, dir: dir) { failedOpens += 1 }
                }
            }
            #expect(failedOpens >= calls, "every \(operation) of the open was made to fail at least once")
        }
    }

    /// A read that fails in `get` (mapping refused, so reads go through `pread`) throws; the
    /// key stays, and reads again once the device answers.
    @Test func aFailedReadInAGetThrowsAndKeepsTheKey() throws {
        let dir = TemporaryDirectory()
        let faulty = FaultyFileSystem(wrapping: POSIXFileSystem())
        faulty.inject(.init(operation: .map, at: 1, forever: true))
        var o = options(segmentSize: 16 << 10)
        o.fileSystem = faulty
        let store = try DiskStore(directory: dir.path, options: o)
        var rng = SeededBytes(seed: 7)
        var values: [String: Data] = [:]
        for i in 0..<60 { values["k\(i)"] = rng.random(700) }
        for i in stride(from: 0, to: 60, by: 3) { try store.setValue(rng.random(700), forKey: "k\(i)") }   // dead after the next line
        for (key, value) in values { try store.setValue(value, forKey: key) }
        try store.sync()
        faulty.inject(.init(operation: .read, at: 1, errno: EIO, forever: true))
        for i in 0..<60 {
            #expect(throws: CaskError.self) { _ = try store.value(forKey: "k\(i)") }
        }
        #expect(throws: CaskError.self) { _ = try store.scrub() }
        #expect(throws: CaskError.self) { try store.compact() }
        faulty.clear()
        #expect(store.statistics.corruptRecords == 0)
        for (key, value) in values { #expect(try store.value(forKey: key) == value) }
        try store.close()
        #expect(try Self.contents(dir.path).count == 60)
    }

    /// The lock file's first read (the previous owner's generation, which readers compare)
    /// failing fails the open: taking it for an empty file would restart the generation.
    @Test func aFailedReadOfTheLockFileFailsTheOpen() throws {
        let dir = TemporaryDirectory()
        let source = try Self.makeStore(.snapshot, in: dir)
        let faulty = FaultyFileSystem(wrapping: POSIXFileSystem())
        faulty.inject(.init(operation: .read, at: 1, errno: EIO))
        var o = options()
        o.fileSystem = faulty
        do {
            _ = try DiskStore(directory: source, options: o)
            Issue.record("the open went on past a failed read of the lock file")
        } catch {
            #expect(Self.isInjectedEIO(error) && "\(error)".contains("LOCK"), "\(error)")
        }
        #expect(try Self.contents(source).count == 60)
    }

    /// `verify` reports a read that keeps failing as unreadable, not as damage; `--repair`'s
    /// salvaging file system gives those bytes up as damage, and nothing else.
    @Test func verifyReportsUnreadableBytesAndOnlyRepairGivesThemUp() throws {
        let dir = TemporaryDirectory()
        let source = try Self.makeStore(.hints, in: dir)
        let faulty = FaultyFileSystem(wrapping: POSIXFileSystem())
        faulty.inject(.init(operation: .read, at: 1, errno: EIO, forever: true))
        let report = try StoreVerifier(directory: source, fileSystem: faulty).verify()
        #expect(report.problems.isEmpty, "unreadable is not damage: \(report.problems)")
        #expect(!report.unreadable.isEmpty && !report.isClean)
        #expect(report.unreadable.allSatisfy { $0.message.contains("errno 5") })
        let places = report.unreadable.map { "\($0.file):\($0.offset)" }
        #expect(Set(places).count == places.count, "each unreadable range is reported once: \(places)")
        faulty.clear()
        #expect(try StoreVerifier(directory: source, fileSystem: faulty).verify().isClean)

        // A plain open refuses the store while reads fail, and changes nothing.
        faulty.inject(.init(operation: .read, at: 1, errno: EIO, forever: true))
        var o = options()
        o.fileSystem = faulty
        #expect(throws: CaskError.self) { try DiskStore(directory: source, options: o) }
        #expect(try Self.contents(source).count == 60)
    }
}
