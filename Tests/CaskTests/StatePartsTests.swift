import Foundation
import Testing
@testable import Cask
import CaskFormat

/// The parts of ``StoreState`` on their own (Architecture.md, "The store's state"): each changes
/// only through its functions and keeps its invariants, checked here without a store around it.
@Suite struct StatePartsTests {
    func entry(segment: UInt32, offset: UInt32 = 48, sequence: UInt64, expiry: Int64 = 0, tombstone: Bool = false) -> IndexEntry {
        IndexEntry(segment: segment, offset: offset, storedLength: 10, sequence: sequence, expiry: expiry, accessTime: 0,
                   flags: tombstone ? IndexEntry.tombstoneFlag : 0, keyLength: 1)
    }

    func withKey<R>(_ key: String, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Array(key.utf8).withUnsafeBytes(body)
    }

    // MARK: LogNumbers

    @Test func logNumbersOnlyGrowAndNeverIssueAnIDTwice() {
        var n = LogNumbers(nextSequence: 10, activeSegment: 4)
        n.takeSequence()
        n.advance(to: 5)   // never back
        #expect(n.nextSequence == 11)
        n.advance(to: 40)
        #expect(n.nextSequence == 40)
        var ids: [UInt32] = []
        for _ in 0..<5 { ids.append(n.takeSegmentID()) }
        #expect(ids == [5, 6, 7, 8, 9] && n.nextSegmentID == 10)
        let reserved = n.reserve(below: 100), again = n.reserve(below: 50)
        #expect(reserved == 100 && again == 100, "the reservation only grows")
        #expect(n.invariantViolation() == nil)
        #expect(LogNumbers(nextSequence: 0, activeSegment: 1).invariantViolation() != nil, "0 is never issued")
    }

    // MARK: LogTail

    func tail(in dir: TemporaryDirectory, keyring: Keyring? = nil) throws -> (LogTail, StoreOptions) {
        let options = StoreOptions()
        let header = SegmentHeader(id: 1, kind: .log, flags: 0, minimumSequence: 1, sequenceLimit: 0, keyID: 0)
        let writer = try SegmentWriter.start(header, in: dir.path, options: options)
        return (LogTail(directory: dir.path, writer: writer, nextSequence: 1, keyring: keyring), options)
    }

    /// Reserves the segment to follow the active one and creates its file, as the flush thread does.
    func prepare(_ t: inout LogTail, room: Int64, in dir: TemporaryDirectory, options: StoreOptions) throws -> (SegmentHeader, SegmentFile) {
        let reserved = t.reserveNextSegment(room: room, keyID: 0)
        let header = try #require(reserved)
        return (header, try StoreFiles.createSegment(header, in: dir.path, fs: options.fileSystem, mapLength: 0))
    }

    @Test func theTailNumbersItsRecordsAndStartsSegmentsAboveThem() throws {
        let dir = TemporaryDirectory()
        var (t, options) = try tail(in: dir)
        let value = Array("value".utf8)
        let first = try withKey("a") { k in try value.withUnsafeBytes { v in
            try t.append(.value(k, stored: v, originalLength: v.count, flags: 0, expiry: 0), now: 1) } }
        let second = try withKey("b") { k in try t.append(.tombstone(k, hiding: 1), now: 2) }
        #expect(first.entry.sequence == 1 && second.entry.sequence == 2 && second.entry.isTombstone)
        #expect(first.entry.segment == 1 && first.size == Int64(Format.recordHeaderSize + 1 + value.count))
        #expect(Int64(second.entry.offset) == Int64(first.entry.offset) + first.size, "records follow each other")
        try t.startSegment(flags: 0, options: options)
        #expect(t.writer.id == 2 && t.numbers.nextSequence == 3 && t.numbers.nextSegmentID == 3)
        #expect(t.invariantViolation() == nil)
    }

    @Test func aPreparedSegmentIsUsedOnlyBehindTheSegmentItWasReservedFor() throws {
        let dir = TemporaryDirectory()
        var (t, options) = try tail(in: dir)
        let (header, file) = try prepare(&t, room: 1000, in: dir, options: options)
        #expect(t.numbers.reservedMinimumSequence == header.minimumSequence && header.minimumSequence > t.numbers.nextSequence)
        let behindAnother = t.adoptPrepared(file, header: header, follows: 7)
        let adopted = t.adoptPrepared(file, header: header, follows: 1)
        let second = t.reserveNextSegment(room: 1000, keyID: 0)
        #expect(!behindAnother && adopted, "kept only behind the segment it was reserved for")
        #expect(second == nil, "one prepared segment at a time")
        #expect(t.usablePrepared?.file.id == UInt32(header.id))
        try t.startSegment(flags: 0, options: options)
        #expect(t.writer.id == UInt32(header.id) && t.preparedSegment == nil)
        #expect(t.numbers.nextSequence == header.minimumSequence, "the new segment starts at its reservation")
        #expect(t.invariantViolation() == nil)
    }

    @Test func aClearingSegmentNeverTakesThePreparedOneAndRemovesIt() throws {
        let dir = TemporaryDirectory()
        var (t, options) = try tail(in: dir)
        let (header, file) = try prepare(&t, room: 0, in: dir, options: options)
        let adopted = t.adoptPrepared(file, header: header, follows: 1)
        #expect(adopted)
        try t.startSegment(flags: Format.SegmentFlag.clearsOlder, options: options)
        #expect(t.writer.id != UInt32(header.id) && t.preparedSegment == nil)
        #expect(!FileManager.default.fileExists(atPath: file.path), "the unused prepared segment is removed")
        #expect(t.numbers.nextSequence >= header.minimumSequence, "nor are its reserved numbers issued again")
        t.close()
        let afterClose = t.reserveNextSegment(room: 0, keyID: 0)
        #expect(t.isClosed && afterClose == nil)
    }

    // MARK: PendingWork

    @Test func pendingWorkWakesEachThreadOncePerRequest() {
        var w = PendingWork()
        let first = w.wantCompactionForLimit(), second = w.wantCompactionForLimit()
        #expect(first && !second, "once per crossing of the limit")
        var d = StoreState.Deferred()
        w.requestRollover()
        w.handOver(into: &d, sealDue: true)
        #expect(d.jobs == [.compact, .seal])
        var again = StoreState.Deferred()
        w.handOver(into: &again, sealDue: true)
        #expect(again.jobs.isEmpty, "the flush thread is woken once per seal")
        #expect(w.rolloverRequested, "the seal stays requested until the segment is sealed")
        w.noteSealedGarbage()
        #expect(w.sealedGarbageGrew)
        w.compactionStarted()
        #expect(!w.sealedGarbageGrew, "the compaction thread has seen the garbage")
        let third = w.wantCompactionForLimit()
        #expect(third, "a new pass may be asked for")
        w.beginSweep(7, of: [1, 2])
        #expect(w.sweeping[7] == [1, 2])
        w.endSweep(7)
        #expect(w.sweeping.isEmpty)
    }

    // MARK: SegmentSet

    @Test func theSegmentSetCountsFilesHintsAndDeletionsThroughItsEdits() throws {
        let dir = TemporaryDirectory()
        let fs = StoreOptions().fileSystem
        func file(_ id: UInt32) throws -> SegmentFile {
            let path = dir.file("\(id).cask")
            return SegmentFile(id: id, path: path, handle: try fs.open(path, mode: .createTruncate), fileSystem: fs)
        }
        var set = SegmentSet()
        set.apply(.add(try file(1), usage: SegmentUsage(fileBytes: 1000, liveBytes: 0), hintBytes: 100))
        set.apply(.add(try file(2), usage: SegmentUsage(fileBytes: 500, liveBytes: 0), hintBytes: nil))
        set.addLive(300, entries: 3, in: 1)
        set.moveLive(100, entries: 1, from: 1, to: 2)
        #expect(set.liveBytes == 300 && set.usage[2]?.liveCount == 1 && set.fileBytes == 1600)
        set.apply(.retire([1]))
        #expect(set.fileBytes == 1600, "a retired segment counts until it is unlinked")
        set.apply(.unlinked(1))
        #expect(set.fileBytes == 500 && set.files[1] == nil)
        set.noteHint(of: 1, bytes: 50)
        #expect(set.hintBytes[1] == nil, "no hint size is kept for a segment that is gone")
        #expect(set.invariantViolation() == nil)
        set.addLive(-200, in: 2)
        #expect(set.invariantViolation() != nil, "negative live bytes are caught")
    }

    // MARK: KeyDirectory

    @Test func theKeyDirectoryAddsUpWhatItHolds() {
        var keys = KeyDirectory()
        let a = entry(segment: 1, sequence: 1, expiry: 99)
        withKey("a") { _ = keys.install(a, forKey: $0) }
        withKey("b") { _ = keys.install(entry(segment: 1, offset: 100, sequence: 2), forKey: $0) }
        #expect(keys.liveBytes == Int64(2 * a.recordSize) && keys.expiringCount == 1)
        let released = withKey("a") { keys.install(entry(segment: 2, sequence: 3), forKey: $0) }
        #expect(released.entry?.sequence == 1 && keys.expiringCount == 0)
        let removed = withKey("b") { keys.install(entry(segment: 2, sequence: 4, tombstone: true), forKey: $0) }
        #expect(removed.entry?.sequence == 2 && keys.index.count == 1, "a tombstone removes its key")
        #expect(keys.invariantViolation() == nil)
        keys.removeAll()
        #expect(keys.liveBytes == 0 && keys.index.count == 0 && keys.invariantViolation() == nil)
    }

    // MARK: LimitController

    @Test func theLimitControllerAdmitsOnlyWhatWasAskedForMoreThanTheVictim() {
        var limiter = LimitController(countsRequests: true)
        for _ in 0..<5 { limiter.noteRequest(1, keys: 100, missed: true) }
        limiter.noteRequest(2, keys: 100, missed: true)
        #expect(limiter.admits(1, over: 2) && !limiter.admits(2, over: 1))
        #expect(limiter.invariantViolation() == nil)
        let lru = LimitController(countsRequests: false)
        #expect(!lru.countsRequests && lru.admission == nil, "least recently used counts nothing")
    }
}
