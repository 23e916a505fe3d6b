import Foundation
import CaskFormat

extension DiskStore {
    // MARK: Compaction

    /// Compacts now: rewrites every segment that holds dead records (overwritten, removed,
    /// expired, evicted) or is small enough to merge, in passes of at most one segment of live
    /// data, and deletes the old files. Reads and writes go on meanwhile. The active segment
    /// counts too: when it holds dead records it is sealed first (a rollover: it is synced and
    /// a new active segment started), so a store whose items were all removed shrinks to a
    /// few KiB. Tombstones that may still hide an older record are kept (format-spec.md,
    /// "Compaction").
    ///
    /// - Returns: what the passes did, summed.
    /// - Throws: ``CaskError/io(operation:path:errno:)``; the store is then as it was before the
    ///   failing pass (earlier passes stay done).
    @discardableResult
    public func compact() throws(CaskError) -> CompactionReport {
        try runCompaction(force: true)
    }

    /// Compacts only what the policy and the limits call for.
    @discardableResult
    func compactIfNeeded() throws(CaskError) -> CompactionReport {
        try runCompaction(force: false)
    }

    /// The writers' back-pressure under the byte limit: a write that found disk use past
    /// `byteLimit − 1.5 × segmentSize` (``StoreState/isOverHardLimit``) returns once it is not. While the compaction thread is
    /// compacting, it waits for the thread's passes (polling every 200 µs) instead of for its
    /// whole run; otherwise it runs one pass at a time itself. Stops when a pass reclaims
    /// nothing (nothing more can go) or the store closes.
    func relieveByteLimitPressure() throws(CaskError) {
        while state.gauges().isOverHardLimit {
            if compacting.load(ordering: .relaxed) {
                usleep(200)
                continue
            }
            if try runCompaction(force: false, maximumPasses: 1).bytesReclaimed <= 0 { return }
        }
    }

    /// Whether a compaction pass is running now (for benchmarks that split latency by it).
    package var isCompacting: Bool { compacting.load(ordering: .relaxed) }

    /// `betweenPasses`: the compaction thread's eviction ahead of the byte limit, which must not
    /// wait for a whole run of passes.
    private func runCompaction(force: Bool, maximumPasses: Int = 1000, betweenPasses: (() -> Void)? = nil) throws(CaskError) -> CompactionReport {
        try requireWritable()
        return try compactionLock.withLock { _ throws(CaskError) -> CompactionReport in
            compacting.store(true, ordering: .relaxed)
            defer { compacting.store(false, ordering: .relaxed) }
            var total = CompactionReport()
            let compactor = Compactor(state: state, directory: directory, options: options, lock: lock, cancellation: closing)
            var passes = 0
            while passes < maximumPasses {
                try closing.check()
                let now = options.clock.now
                sweepExpiredItems(force: force, now: now)
                // `rotates`: the pass re-seals segments sealed under a previous key.
                let sealsActive = force && passes == 0
                let (plan, rotates, deferred) = try state.withLock { s throws(CaskError) -> (Compactor.Plan?, Bool, StoreState.Deferred) in
                    guard !s.isClosed else { throw .closed }
                    // A forced run first seals an active segment that holds dead records, so
                    // that its passes can reclaim them (``compact()``); one without garbage
                    // writes nothing.
                    if sealsActive && s.activeGarbageBytes > 0 { try s.rollover() }
                    let plan = Compactor.plan(&s, force: force, now: now)
                    let rotates = plan?.ids.contains { id in s.usage[id].map { s.options.needsReseal(segment: id, keyID: $0.keyID) } ?? false }
                    return (plan, rotates ?? false, s.takeBackgroundDeferred())
                }
                if !deferred.isEmpty { finish(deferred) }
                guard let plan else { break }
                let report = try compactor.run(plan)
                if timings.isObserved { timings.deliver(CaskTiming(.compaction, .nanoseconds(Int64(report.seconds * 1e9)))) }
                options.eventHandler?(.compacted(report))
                total.segmentsCompacted += report.segmentsCompacted
                total.bytesRead += report.bytesRead
                total.bytesWritten += report.bytesWritten
                total.bytesReclaimed += report.bytesReclaimed
                total.recordsCopied += report.recordsCopied
                total.tombstonesDropped += report.tombstonesDropped
                total.removalsDropped += report.removalsDropped
                total.seconds += report.seconds
                passes += 1
                betweenPasses?()
                // A pass that reclaimed nothing (only tombstones that must stay) ends the run,
                // unless it re-sealed segments under a previous key: rotation reclaims nothing
                // from segments without garbage, and each such pass leaves fewer of them.
                if report.bytesReclaimed <= 0 && !rotates { break }
                // Without pressure, one pass per call of the background thread is enough.
                if !force && !state.gauges().isOverDiskBudget { break }
            }
            return total
        }
    }

    /// The background thread's pass. Returns false once the store is closed.
    func backgroundCompaction() -> Bool {
        let closed = state.withLock { s -> Bool in
            s.work.compactionStarted()
            return s.isClosed
        }
        if closed { return false }
        evictAheadOfTheByteLimit()
        sealIdleActiveSegment()
        do throws(CaskError) {
            _ = try runCompaction(force: false) { [self] in evictAheadOfTheByteLimit() }
        } catch {
            if error == .closed { return false }
            state.noteBackgroundFailure("background compaction failed", error)
        }
        return true
    }

    /// Seals the active segment and starts a new one (format-spec.md, "Rollover"), so that the
    /// next compaction may rewrite what it held: for `cask verify --repair`, whose scrub can find
    /// damage in the newest segment, where a later recovery without the index snapshot would
    /// take the damage for a torn tail and cut every record after it.
    package func sealActiveSegment() throws(CaskError) {
        try requireWritable()
        try maintain { s, _ throws(CaskError) in try s.rollover() }
    }

    // MARK: Trimming

    /// Runs `body` under the lock and then does what it left (events, compaction).
    private func maintain<R>(_ body: (inout StoreState, Int64) throws(CaskError) -> R) throws(CaskError) -> R {
        let now = options.clock.now
        defer { schedule(.lookForCompaction) }
        let (result, deferred) = try state.withLock { s throws(CaskError) -> (R, StoreState.Deferred) in
            guard !s.isClosed else { throw .closed }
            let r = try body(&s, now)
            s.work.wantCompaction()
            return (r, s.takeDeferred())
        }
        finish(deferred)
        return result
    }

    /// Removes items not read or written since `date` (the references' trim-to-date). Pinned
    /// items stay. Returns how many were removed.
    @discardableResult
    public func trim(toDate date: Date) throws(CaskError) -> Int {
        try requireWritable()
        let cutoff = date.milliseconds
        return try maintain { s, now throws(CaskError) in
            try s.sweep(now: now, cause: .age) { $0.isPinned || $0.accessTime >= cutoff ? nil : .age }
        }
    }

    /// Evicts least recently used items until live records take at most `bytes` (unpinned items
    /// first). Compaction then returns the space to the file system.
    public func trim(toSize bytes: Int) throws(CaskError) {
        try requireWritable()
        try maintain { s, now throws(CaskError) in
            try s.evictInOrder(cause: .size, now: now) { $0.liveBytes <= bytes }
        }
    }

    /// Evicts the largest items first until live records take at most `bytes` (unpinned first).
    public func trimLargestFirst(toSize bytes: Int) throws(CaskError) {
        try requireWritable()
        try maintain { s, now throws(CaskError) in
            try s.evictInOrder(cause: .size, now: now, largestFirst: true) { $0.liveBytes <= bytes }
        }
    }

    /// Evicts least recently used items until at most `count` remain (unpinned first).
    public func trim(toCount count: Int) throws(CaskError) {
        try requireWritable()
        try maintain { s, now throws(CaskError) in
            try s.evictInOrder(cause: .count, now: now) { $0.index.count <= count }
        }
    }

    /// Removes every item whose TTL has run out or that is past the age limit. Returns how many.
    @discardableResult
    public func removeExpired() throws(CaskError) -> Int {
        try requireWritable()
        return try maintain { s, now throws(CaskError) in try s.removeExpired(now: now) }
    }

    /// Removes every pinned item (`pinned: true`) or every unpinned one (`pinned: false`).
    @discardableResult
    public func removeAll(pinned: Bool) throws(CaskError) -> Int {
        try requireWritable()
        return try maintain { s, now throws(CaskError) in
            let keys = s.index.all.filter { $0.entry.isPinned == pinned }.map(\.key)
            for key in keys {
                try withKeyBytes(key) { k throws(CaskError) in
                    _ = try s.write(.tombstone(k, hiding: StoreState.hiding(s.index.entry(forKey: k)), removedKey: key), now: now, durable: false)
                }
            }
            return keys.count
        }
    }

    /// Pins or unpins `key`: a pinned item ignores its TTL and the age limit and is evicted only
    /// after every unpinned item. Only the pin changes: the value, its write and access times
    /// (pinning is not a use for LRU) and its expiry are kept. A small pin record (format-spec.md,
    /// "Record", kind 3) carries the change; the value is neither read nor rewritten. Durable
    /// like a put in the store's mode (synced before returning in `.everyWrite`).
    ///
    /// - Returns: false when the key is absent, expired or aged out (nothing is written); true
    ///   otherwise, also when it already was in that state (nothing is written then either).
    /// - Throws: ``CaskError/io(operation:path:errno:)``, ``CaskError/closed``; the pin state is
    ///   then unchanged.
    @discardableResult
    public func setPinned(_ pinned: Bool, forKey key: String) throws(CaskError) -> Bool {
        try requireWritable()
        let now = options.clock.now
        return try writing(key) { keyBytes, s, durable throws(CaskError) -> (Bool, ticket: UInt64?) in
            guard let entry = s.index.entry(forKey: keyBytes),
                  StoreState.goneCause(entry, now: now, ageLimit: s.ageLimitMilliseconds) == nil else { return (false, nil) }
            if entry.isPinned == pinned { return (true, nil) }
            // Durable before it takes effect in `.everyWrite`, as a put (the group commit
            // applies it; a failed sync leaves the pin as it was).
            return (true, try s.write(.pin(keyBytes, pinned: pinned, target: entry.sequence), now: now, durable: durable).ticket)
        }
    }
}
