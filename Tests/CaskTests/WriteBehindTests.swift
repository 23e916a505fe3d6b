import Foundation
import Testing
import CaskTesting
@testable import Cask

/// Full write buffers of the active segment are written by the buffer writer thread, outside the
/// store's lock (SegmentWriter+Handoff.swift): records stay readable while handed off, nothing
/// is lost or reordered, and a failed background write is cut off and written again.
@Suite struct WriteBehindTests {
    func value(_ i: Int) -> Data { Data((0..<(150 + i % 97)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }) }

    @Test func handedOffRecordsStayReadableAndAllSurviveAReopen() throws {
        let dir = TemporaryDirectory()
        var o = options(segmentSize: 2 << 20)
        o.writeBufferSize = 16 << 10
        o.compression = .never
        let store = try DiskStore(directory: dir.path, options: o)
        var sawHandoff = false, wrong = 0
        for i in 0..<40_000 {
            try store.setValue(value(i), forKey: "k\(i)")
            if store.state.withLock({ $0.writer.handoff != nil }) { sawHandoff = true }
            // The newest records: in the buffer, in the handoff or just written.
            for back in [1, 40, 90, 200] where i >= back {
                if try store.value(forKey: "k\(i - back)") != value(i - back) { wrong += 1 }
            }
        }
        #expect(sawHandoff, "no put handed off a buffer")
        #expect(wrong == 0)
        try store.close()
        let reopened = try DiskStore(directory: dir.path, options: o)
        defer { try? reopened.close() }
        var lost = 0
        for i in 0..<40_000 where try reopened.value(forKey: "k\(i)") != value(i) { lost += 1 }
        #expect(lost == 0)
    }

    /// The append after `n` writes leaves 100 bytes and fails: a partial write. Whether the
    /// buffer writer or a put meets it, every put that returned is on disk after a reopen, with
    /// nothing after the cut but whole records.
    @Test(arguments: [2, 5, 9])
    func aFailedWriteIsCutOffAndWrittenAgain(n: Int) throws {
        let dir = TemporaryDirectory()
        let faulty = FaultyFileSystem(wrapping: POSIXFileSystem())
        var o = options(segmentSize: 4 << 20)
        o.writeBufferSize = 16 << 10
        o.compression = .never
        o.fileSystem = faulty
        let store = try DiskStore(directory: dir.path, options: o)
        faulty.inject(.init(operation: .append, at: n, shortWrite: 100))
        faulty.inject(.init(operation: .append, at: n + 1))
        var acknowledged: [Int] = []
        for i in 0..<5_000 {
            do { try store.setValue(value(i), forKey: "k\(i)"); acknowledged.append(i) } catch {}
        }
        let failures = store.statistics.backgroundFailures
        print("write \(n) failed: background failures \(failures), puts refused \(5_000 - acknowledged.count)")
        try store.close()
        #expect(faulty.faultsInjected == 2)
        #expect(failures > 0 || acknowledged.count < 5_000, "the failed write went unnoticed")
        var plain = o
        plain.fileSystem = POSIXFileSystem()
        let reopened = try DiskStore(directory: dir.path, options: plain)
        defer { try? reopened.close() }
        var lost = 0
        for i in acknowledged where try reopened.value(forKey: "k\(i)") != value(i) { lost += 1 }
        #expect(lost == 0, "\(lost) of \(acknowledged.count) acknowledged puts lost")
        #expect(reopened.statistics.corruptRecords == 0 && reopened.statistics.damagedRanges == 0)
    }
}
