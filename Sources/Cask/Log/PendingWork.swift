/// The work the store's state leaves for after the lock and for its background threads, named
/// and kept in one place: hint files to write, events to deliver, and the background jobs
/// asked for (``BackgroundJobs``), each woken once per request, not once per put.
/// A value kept in ``StoreState``; changed only under the store's lock, through these methods;
/// ``StoreState/takeDeferred()`` hands it over.
struct PendingWork: Sendable {
    /// Hint files of sealed segments, written by the background writer (encoded there).
    private(set) var hints: [PendingHint] = []
    /// Events to deliver once the lock is released.
    private(set) var events: [StoreEvent] = []
    /// The jobs asked for and not handed over yet: ``BackgroundJobs/compact`` (a rollover, the
    /// limits, maintenance), ``BackgroundJobs/seal`` (the active segment is nearly full,
    /// ``StoreState/backgroundRolloverSize``; kept until the segment is sealed) and
    /// ``BackgroundJobs/lookForCompaction`` (a sealed segment gained dead bytes since the
    /// compaction thread last looked; kept until it does).
    private(set) var requested: BackgroundJobs = []
    /// The jobs whose thread was woken for the current request: ``BackgroundJobs/seal`` once
    /// per segment, ``BackgroundJobs/compact`` once per crossing of the byte limit or the
    /// eviction watermark (until the compaction thread runs).
    private(set) var woken: BackgroundJobs = []

    /// A sealed segment gained dead bytes since the compaction thread last looked.
    var sealedGarbageGrew: Bool { requested.contains(.lookForCompaction) }
    /// The active segment is nearly full and waits for the flush thread to seal it.
    var rolloverRequested: Bool { requested.contains(.seal) }
    /// When compaction last swept for expired items (ms since 1970).
    private(set) var lastExpirySweep: Int64 = 0

    /// Removal records whose walk of the index is under way (DiskStore+Removal.swift,
    /// DiskStore+TagRemoval.swift): their sequence and prefix or tag. Compaction keeps them,
    /// and close writes no index snapshot while any is.
    private(set) var sweeping: [UInt64: [UInt8]] = [:]
    /// Tag removals an open found, applied as the open ends (DiskStore+TagRemoval.swift).
    private(set) var tagRemovalsAtOpen = TagRemovals()

    mutating func queue(_ hint: PendingHint) { hints.append(hint) }

    /// A removal record's walk of the index starts (`bytes`: its prefix or tag).
    mutating func beginSweep(_ sequence: UInt64, of bytes: [UInt8]) { sweeping[sequence] = bytes }

    /// A removal record's walk ended.
    mutating func endSweep(_ sequence: UInt64) { sweeping.removeValue(forKey: sequence) }

    /// Keeps the tag removals an open found; their walks count as under way until applied.
    mutating func adoptTagRemovalsFoundAtOpen(_ found: TagRemovals) {
        tagRemovalsAtOpen = found
        for r in found.removals { sweeping[r.sequence] = r.tag }
    }

    /// The tag removals an open found, handed over (once).
    mutating func takeTagRemovalsFoundAtOpen() -> TagRemovals {
        defer { tagRemovalsAtOpen = TagRemovals() }
        return tagRemovalsAtOpen
    }
    mutating func queue(_ event: StoreEvent) { events.append(event) }

    /// The queued hints, handed over (close, the background writer).
    mutating func takeHints() -> [PendingHint] {
        defer { hints = [] }
        return hints
    }

    /// Drops queued hints (the store was cleared: their segments are gone).
    mutating func dropHints() { hints = [] }

    mutating func wantCompaction() { requested.insert(.compact) }

    /// Wants a compaction for the byte limit, once per crossing. Returns whether this asked.
    @discardableResult
    mutating func wantCompactionForLimit() -> Bool {
        guard !woken.contains(.compact) else { return false }
        requested.insert(.compact)
        woken.insert(.compact)
        return true
    }

    mutating func noteSealedGarbage() { requested.insert(.lookForCompaction) }

    /// The compaction thread starts a pass: it has seen the garbage and the limit's call.
    mutating func compactionStarted() {
        requested.remove(.lookForCompaction)
        woken.remove(.compact)
    }

    mutating func requestRollover() { requested.insert(.seal) }

    /// The active segment was sealed: its rollover request is done, and a compaction may now
    /// rewrite it.
    mutating func rolledOver(hint: PendingHint) {
        requested.remove(.seal)
        woken.remove(.seal)
        hints.append(hint)
        requested.insert(.compact)
    }

    mutating func noteExpirySweep(at now: Int64) { lastExpirySweep = now }

    /// Moves what is queued into `d`: hints, events, the compaction wanted, and a seal when
    /// one is due (`sealDue`: a rollover requested or a gate shut) and the flush thread was not
    /// woken for it yet. Allocates nothing when nothing is queued.
    @inline(__always)
    mutating func handOver(into d: inout StoreState.Deferred, sealDue: Bool) {
        if !hints.isEmpty { d.hints = hints; hints = [] }
        if !events.isEmpty { d.events = events; events = [] }
        if requested.contains(.compact) { d.jobs.insert(.compact); requested.remove(.compact) }
        if sealDue && !woken.contains(.seal) { d.jobs.insert(.seal); woken.insert(.seal) }
    }
}
