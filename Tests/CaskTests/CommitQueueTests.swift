import Testing
@testable import Cask
import CaskFormat

/// The group commit's queue (CommitQueue.swift) on its own: tickets, what a sync covers, failures.
@Suite struct CommitQueueTests {
    func entry(segment: UInt32, offset: UInt32, sequence: UInt64) -> IndexEntry {
        IndexEntry(segment: segment, offset: offset, storedLength: 10, sequence: sequence, expiry: 0, accessTime: 0, flags: 0, keyLength: 1)
    }

    func enqueue(_ q: inout CommitQueue, _ key: String, segment: UInt32, offset: UInt32) -> UInt64 {
        Array(key.utf8).withUnsafeBytes { q.enqueue(entry(segment: segment, offset: offset, sequence: UInt64(offset)), key: $0, removedKey: nil, effect: .install) }
    }

    @Test func aSyncSettlesExactlyTheWritesItCovered() {
        var q = CommitQueue()
        let a = enqueue(&q, "a", segment: 1, offset: 48)     // in a sealed segment
        let b = enqueue(&q, "b", segment: 2, offset: 48)     // ends at 48 + 51
        let c = enqueue(&q, "c", segment: 2, offset: 99)
        #expect([a, b, c] == [1, 2, 3] && !q.isSettled(a))
        let size = Int64(entry(segment: 2, offset: 48, sequence: 0).recordSize)
        let durable = q.takeDurable(active: 2, syncedSize: 48 + size)
        #expect(durable.map(\.ticket) == [a, b])
        #expect(q.isSettled(b) && !q.isSettled(c) && q.count == 1)
        #expect(q.takeDurable(active: 2, syncedSize: 48 + size).isEmpty, "nothing more is covered")
        q.checkInvariants()
    }

    @Test func aFailedSyncFailsEveryWaitingWriteOnce() {
        var q = CommitQueue()
        let a = enqueue(&q, "a", segment: 2, offset: 48)
        let b = enqueue(&q, "b", segment: 2, offset: 99)
        q.failAll(.closed)
        #expect(q.isEmpty && q.isSettled(a) && q.isSettled(b))
        #expect(q.takeFailure(of: a) != nil && q.takeFailure(of: a) == nil)
        #expect(q.takeFailure(of: b) != nil)
        q.checkInvariants()
    }

    @Test func settlingAllLeavesNoFailureAndFindsTheNewestWriteOfAKey() {
        var q = CommitQueue()
        _ = enqueue(&q, "k", segment: 2, offset: 48)
        let newer = enqueue(&q, "k", segment: 2, offset: 99)
        Array("k".utf8).withUnsafeBytes { k in
            #expect(q.newestWrite(ofKey: k)?.ticket == newer && q.hasWrite(ofKey: k))
        }
        #expect(q.segments == [2])
        q.settleAll()
        #expect(q.isEmpty && q.isSettled(newer) && q.takeFailure(of: newer) == nil)
        Array("k".utf8).withUnsafeBytes { k in #expect(!q.hasWrite(ofKey: k)) }
    }
}
