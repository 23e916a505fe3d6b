/// The log's numbering: the sequence number the next record takes, the id the next segment
/// takes, and the sequence numbers reserved for a segment prepared ahead of its rollover.
///
/// Invariants (``invariantViolation()``): sequence numbers only grow, and 0 is never issued
/// (format-spec.md, "Sequence numbers"); a segment id is never issued twice; the reservation
/// only grows. Every change goes through the functions below.
///
/// Not thread-safe: a part of ``StoreState``, changed under the store's lock.
struct LogNumbers: Sendable {
    /// The sequence number the next record takes.
    private(set) var nextSequence: UInt64
    /// The id the next segment takes (a log segment or a compaction output).
    private(set) var nextSegmentID: UInt32
    /// Every rollover starts its segment at this sequence number or above: the `minimumSequence`
    /// of the last segment reserved for preparation (StoreState+Rollover.swift).
    private(set) var reservedMinimumSequence: UInt64 = 0

    /// Numbering that continues a log whose newest record took `nextSequence − 1` and whose
    /// active segment is `activeSegment`.
    init(nextSequence: UInt64, activeSegment: UInt32) {
        self.nextSequence = nextSequence
        self.nextSegmentID = activeSegment &+ 1
    }

    /// Issues the next sequence number (a record was appended with it).
    mutating func takeSequence() {
        nextSequence += 1
    }

    /// Issues the next segment id.
    mutating func takeSegmentID() -> UInt32 {
        defer { nextSegmentID &+= 1 }
        return nextSegmentID
    }

    /// Skips ahead to `sequence` (a segment starting there became active); never back.
    mutating func advance(to sequence: UInt64) {
        nextSequence = max(nextSequence, sequence)
    }

    /// Reserves the sequence numbers below `minimum` for the active segment (a segment prepared
    /// to follow it starts at `minimum` or above); returns the reservation.
    mutating func reserve(below minimum: UInt64) -> UInt64 {
        reservedMinimumSequence = max(reservedMinimumSequence, minimum)
        return reservedMinimumSequence
    }

    /// A description of the first broken invariant, nil when all hold. O(1).
    func invariantViolation() -> String? {
        nextSequence == 0 ? "no sequence number issued yet is 0" : nil
    }
}
