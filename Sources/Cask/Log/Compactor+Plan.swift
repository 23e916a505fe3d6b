import CaskFormat

extension Compactor {
    /// The most inputs one pass takes (a listed record names its input in 16 bits); the rest
    /// wait for the next pass.
    static let maximumInputs = 4096

    /// Which segments one pass rewrites.
    struct Plan {
        /// The inputs, in the order they are deleted: by minimum sequence, oldest first.
        var ids: [UInt32]
        /// The lowest minimum sequence of every segment that stays: a tombstone below it has no
        /// older record left to hide.
        var remainingMinimumSequence: UInt64
        /// The same over the segments that stay and hold dead bytes: only those can hold a record
        /// a removal record removes (once its walk is done, no such record is in the index).
        var remainingMinimumSequenceWithDeadBytes: UInt64
        var outputID: UInt32
    }

    /// Chooses inputs under the lock: sealed segments whose dead share reaches the policy's ratio
    /// (any dead share at all under byte-limit pressure or when `force`d), plus small segments worth
    /// merging, up to one pass's worth of live bytes.
    static func plan(_ s: inout StoreState, force: Bool, now: Int64) -> Plan? {
        // Expired items were dropped just before, in slices of the lock, so that their bytes
        // can go (DiskStore.sweepExpiredItems).
        let pressure = s.diskBudget.map { s.fileBytes > $0 } ?? false
        let threshold = s.options.compaction.garbageRatio
        let passBytes = Int64(s.options.compaction.maximumPassBytes > 0 ? s.options.compaction.maximumPassBytes : s.options.segmentSize)
        let small = Int64(s.options.segmentSize / 4)
        var candidates: [(id: UInt32, garbage: Double, live: Int64)] = []
        let awaiting = s.commits.isEmpty ? [] : s.commits.segments
        let lowest = LowestSequences(s)
        for (id, u) in s.usage where id != s.active.id && !awaiting.contains(id) {
            let payload = u.fileBytes - Int64(Format.segmentHeaderSize)
            let settled = lowest.excluding(id) <= u.settledUntil ? u.settledDeadBytes : 0
            let garbage = payload > 0 ? Double(max(0, payload - u.liveBytes - settled)) / Double(payload) : 1
            let isSmall = u.fileBytes < small
            // Sealed under a previous key, or before the store had an id (re-sealed), or with a
            // damaged header: rewritten whatever its garbage, first.
            let isRotating = s.options.needsReseal(segment: id, keyID: u.keyID)
            if isRotating || u.headerDamaged {
                candidates.append((id, 2, u.liveBytes))
            } else if garbage >= threshold || ((force || pressure) && garbage > 0) || isSmall {
                candidates.append((id, garbage, u.liveBytes))
            }
        }
        // Small segments are only worth merging when there are several: rewriting one alone
        // for a little garbage would copy it again and again (each output is small too).
        if candidates.count == 1, let only = candidates.first, only.garbage < threshold, !(force || pressure), only.garbage <= 1 {
            return nil
        }
        candidates.sort { ($0.garbage, $1.id) > ($1.garbage, $0.id) }
        var chosen: [UInt32] = []
        var live: Int64 = 0
        for c in candidates where chosen.count < Self.maximumInputs {
            if !chosen.isEmpty && live + c.live > passBytes { continue }
            chosen.append(c.id)
            live += c.live
        }
        guard !chosen.isEmpty else { return nil }
        if chosen.count == 1, let u = s.usage[chosen[0]],
           u.liveBytes + (lowest.excluding(chosen[0]) <= u.settledUntil ? u.settledDeadBytes : 0) >= u.fileBytes - Int64(Format.segmentHeaderSize),
           !s.options.needsReseal(segment: chosen[0], keyID: u.keyID), !u.headerDamaged {
            return nil   // one segment with nothing dead but what it must keep: rewriting it gains nothing
        }
        let chosenSet = Set(chosen)
        let staying = s.usage.filter { !chosenSet.contains($0.key) }
        let remaining = min(s.lingeringMinimumSequence, staying.map(\.value.minimumSequence).min() ?? .max)
        let withDeadBytes = staying.filter { $0.value.fileBytes - Int64(Format.segmentHeaderSize) > $0.value.liveBytes }
        let remainingWithDead = min(s.lingeringMinimumSequence, withDeadBytes.map(\.value.minimumSequence).min() ?? .max)
        let outputID = s.tail.takeSegmentID()
        // The order the inputs are read in and deleted in: oldest records first (see
        // Compactor+DeletionOrder), so that tombstones can go with the records they hide.
        let ordered = chosen.sorted { (s.usage[$0]?.minimumSequence ?? 0, $0) < (s.usage[$1]?.minimumSequence ?? 0, $1) }
        return Plan(ids: ordered, remainingMinimumSequence: remaining, remainingMinimumSequenceWithDeadBytes: remainingWithDead, outputID: outputID)
    }
}

/// Dead bytes in the active segment, which compaction can reclaim only once it is sealed.
extension StoreState {
    /// Bytes of the active segment's records that no longer hold a live item (overwritten,
    /// removed, expired or evicted values, and tombstones), buffered records included.
    var activeGarbageBytes: Int64 {
        guard let u = usage[writer.id] else { return 0 }
        return max(0, u.fileBytes - Int64(Format.segmentHeaderSize) - u.liveBytes)
    }

    /// Whether the compaction thread seals the active segment once the store goes idle
    /// (``DiskStore/sealIdleActiveSegment()``): at least ``CompactionPolicy/garbageRatio`` of its
    /// records are dead, and those dead bytes are worth a rollover and a pass: at least
    /// `min(segmentSize / 16, 1 MiB)`, or, when nothing in it is live any more (say every key
    /// was removed), at least `min(segmentSize / 16, 4 KiB)`. A store written to steadily is not
    /// sealed early by this (the thread waits for a check interval without writes), and a small
    /// store that overwrites a few keys now and then is sealed at most once per MiB of garbage.
    var activeIsWorthSealing: Bool {
        guard let u = usage[writer.id] else { return false }
        let payload = u.fileBytes - Int64(Format.segmentHeaderSize)
        let garbage = activeGarbageBytes
        guard payload > 0, Double(garbage) >= Double(payload) * options.compaction.garbageRatio else { return false }
        let floor = u.liveBytes == 0 ? min(Int64(options.segmentSize / 16), 4096) : min(Int64(options.segmentSize / 16), 1 << 20)
        return garbage >= floor
    }
}

/// The lowest `minimumSequence` over the store's segments and its lingering inputs, and the
/// second lowest, so that the lowest over every segment but one is O(1): whether a segment's
/// settled tombstones may go yet (``SegmentUsage/settledUntil``).
private struct LowestSequences {
    private var lowest: (id: UInt32?, sequence: UInt64) = (nil, .max)
    private var second: UInt64 = .max

    init(_ s: StoreState) {
        second = s.lingeringMinimumSequence
        for (id, u) in s.usage {
            if u.minimumSequence < lowest.sequence {
                second = min(second, lowest.sequence)
                lowest = (id, u.minimumSequence)
            } else {
                second = min(second, u.minimumSequence)
            }
        }
        if s.lingeringMinimumSequence < lowest.sequence {
            second = min(second, lowest.sequence)
            lowest = (nil, s.lingeringMinimumSequence)
        }
    }

    /// The lowest over every segment but `id`, and the lingering inputs.
    func excluding(_ id: UInt32) -> UInt64 { lowest.id == id ? second : lowest.sequence }
}
