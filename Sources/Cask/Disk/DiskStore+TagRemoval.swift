import CaskFormat

/// Removing every cache entry that lists a tag at once (format-spec.md, "Removal by tag").
extension DiskStore {
    /// Removes every cache entry written with `tag` (``CacheEntryOptions/tags``) before this
    /// call, and none written after it (a put that overlaps the call may land on either side).
    /// Plain values have no tags and are never removed by it.
    ///
    /// One removal record is appended and synced before anything leaves the index, whatever
    /// the ``StoreOptions/durability``: once the call returns, no crash can bring one of these
    /// entries back. Then the index is walked in slices of the store's lock for the tagged
    /// entries older than the record, and each one's record is read, without the lock, for its
    /// tags: the walk is O(items) in the caller's time plus one read per tagged entry (the
    /// index keeps no tags). Compaction drops the record once no record it removes remains;
    /// until then, an open that does not restore the index snapshot reads the tagged entries
    /// again to apply it.
    ///
    /// Thread-safe; two removals may run at once.
    ///
    /// - Parameter tag: 1 to 255 bytes of UTF-8, compared byte for byte.
    /// - Returns: how many live items were removed (expired ones leave silently).
    /// - Throws: ``CaskError/invalidOption(_:)`` for an empty or too long tag,
    ///   ``CaskError/readOnly(path:)``, ``CaskError/closed``, and
    ///   ``CaskError/io(operation:path:errno:)`` when the record could not be written or
    ///   synced (then nothing was removed) or when a tagged entry's record could not be read:
    ///   then the removal is durable and every other entry it covers is gone, but the entries
    ///   that could not be read stay until the store is opened again (the open applies the
    ///   record, or fails with the same error) and no index snapshot is written meanwhile.
    @discardableResult
    public func removeValues(taggedWith tag: String) throws(CaskError) -> Int {
        try requireWritable()
        try Self.checkTag(tag)
        let now = options.clock.now
        let bytes = Array(tag.utf8)
        // Durable before its walk in every mode (format-spec.md, "Removal by tag").
        let (ticket, sequence) = try withKeyBytes(tag) { t throws(CaskError) in
            try beginSweep(.removal(t, tag: true), of: bytes, now: now)
        }
        do throws(CaskError) {
            // Every record written before it is durable and in the index once this returns.
            try commit(ticket)
        } catch {
            endSweeps([sequence])
            throw error
        }
        var removals = TagRemovals()
        removals.add(bytes, sequence: sequence)
        return try removeTaggedEntries(removals, now: now, atOpen: false)
    }

    /// Removes every tagged entry that `removals` covers: finds the tagged entries older than
    /// the newest removal in slices of the lock, reads each one's tags without the lock, and
    /// drops those covered (with no tombstone) in slices again, if their record is still the
    /// key's live one. On success the removals stop being noted as walking
    /// (``StoreState/sweeping``); when a read failed they stay noted (compaction keeps their
    /// records and close writes no snapshot, so that the next open applies them again), the
    /// walk goes on, and the first failure is thrown at the end. Returns how many live items
    /// were removed; each is reported as ``StoreEvent/removed(key:)``, unless `atOpen` (the
    /// removals an open found, as for a prefix removal): then it is counted in
    /// ``StoreStatistics/keysRemovedByTagAtOpen``.
    func removeTaggedEntries(_ removals: TagRemovals, now: Int64, atOpen: Bool) throws(CaskError) -> Int {
        let candidates = taggedEntries(olderThan: removals.newestSequence)
        var covered: [(key: [UInt8], sequence: UInt64)] = []
        var failure: CaskError?
        var next = 0
        while next < candidates.count {
            // Where a batch of records lies, found in one slice of the lock (a lock taken per
            // read, in a tight loop, kept a writer waiting for up to 17 ms); read without it.
            let batch = candidates[next..<min(candidates.count, next + Self.entriesPerRemovalStep)]
            next = batch.endIndex
            let plans = try state.withSlice { s throws(CaskError) -> [ReadPlan] in
                guard !s.isClosed else { throw .closed }
                var plans: [ReadPlan] = []
                for c in batch {
                    let plan: Result<ReadPlan, CaskError> = c.key.withUnsafeBytes { k in
                        Result { () throws(CaskError) in try Self.readPlan(k, in: &s, usedAt: nil) }
                    }
                    plans.append(try plan.get())
                }
                return plans
            }
            for (c, plan) in zip(batch, plans) {
                do throws(CaskError) {
                    let tags = try read(plan, forKey: String(decoding: c.key, as: UTF8.self)) { _, entry, header in
                        entry.sequence == c.sequence ? header?.tags : nil
                    }
                    if let tags = tags ?? nil, removals.removes(tags: tags, sequence: c.sequence) { covered.append(c) }
                } catch .io(let operation, let path, let errno) {
                    failure = failure ?? .io(operation: operation, path: path, errno: errno)
                }
            }
        }
        let removed = removeCovered(covered, now: now, atOpen: atOpen)
        if let failure { throw failure }
        endSweeps(removals.removals.map(\.sequence))
        return removed
    }

    /// The keys and sequence numbers of the tagged entries older than `sequence`, walking the
    /// index backwards in slices of the lock (an entry that moves comes from the part already
    /// walked, or is newer than every removal).
    private func taggedEntries(olderThan sequence: UInt64) -> [(key: [UInt8], sequence: UInt64)] {
        var found: [(key: [UInt8], sequence: UInt64)] = []
        walkIndexBackwards { s, range in
            for n in range.reversed() {
                s.index.withKey(at: n) { key, e in
                    if e.flags & Format.RecordFlag.tagged != 0 && e.sequence < sequence && !e.isTombstone {
                        found.append((Array(key), e.sequence))
                    }
                }
            }
        }
        return found
    }

    /// Drops each of `covered` whose record is still its key's live one, in slices of the lock.
    private func removeCovered(_ covered: [(key: [UInt8], sequence: UInt64)], now: Int64, atOpen: Bool) -> Int {
        var removed = 0
        var next = 0
        while next < covered.count {
            let deferred = state.withSlice { s -> StoreState.Deferred in
                guard !s.isClosed else { next = covered.count; return StoreState.Deferred() }
                let end = min(covered.count, next + Self.entriesPerRemovalStep)
                for c in covered[next..<end] {
                    let n = c.key.withUnsafeBytes { s.index.entryNumber(forKey: $0) }
                    if let n, s.index.entry(at: n).sequence == c.sequence, s.removeCoveredEntry(at: n, now: now, reportsEvent: !atOpen) {
                        removed += 1
                        if atOpen { s.stats.keysRemovedByTagAtOpen += 1 }
                    }
                }
                next = end
                return s.takeDeferred()
            }
            finish(deferred)
        }
        return removed
    }

    /// Applies the tag removals the open found (recovery step 4: format-spec.md), as the open
    /// ends. A failed read fails the open (nothing on disk changed).
    func applyTagRemovals(foundAtOpen found: TagRemovals) throws(CaskError) {
        guard !found.isEmpty else { return }
        _ = try removeTaggedEntries(found, now: options.clock.now, atOpen: true)
    }
}
