/// Phase 4 of a pass: pointing the index at the output, in slices of the lock
/// (format-spec.md, "Compaction": "Switching the index").
///
/// The output joins the store's segments first (it is durable under its own name by then), so
/// that readers can follow an entry to either copy. Then the entries of kept records move to the
/// output in slices bounded by time (``StoreStateLock/forEachInSlices(_:between:_:)``), so
/// writers go first. Between slices writers may overwrite,
/// remove or evict keys of either copy: every move checks that the entry still points at the
/// input record it copied, and moves that record's live bytes from the input's usage to the
/// output's, so the usage stays exact whichever copy a later write forgets. The inputs are
/// forgotten in the last slice, once nothing points into them.
extension Compactor {
    /// Points the index (and live pin records) at the output, then forgets the inputs. Keys
    /// whose entries still pointed at an input had no valid record to copy: they are dropped
    /// with a tombstone (cause `.damage`), and logged here.
    func switchIndex(to output: Output?, kept: [Kept], of listing: Listing, plan: Plan, report: CompactionReport) {
        if let output {
            var residency = InputResidency(listing.inputs)
            state.forEachInSlices(kept.indices) { s, i in
                // The output joins the store's segments in the first slice, before any entry moves.
                if i == kept.startIndex { Self.add(output, firstSequence: kept[0].sequence, to: &s) }
                residency.read(kept[i].input, upTo: kept[i].offset)
                Self.move(kept, i, of: listing, to: output, in: &s)
                return true
            }
            residency.endPhase()
        }
        let (orphans, failures) = state.withSlice { s -> (Int, [CaskError]) in
            // Entries left in the inputs had no valid record to copy (damage): rare, and only
            // then is the whole index walked.
            let left = plan.ids.reduce(0) { $0 + (s.usage[$1]?.liveCount ?? 0) }
            let orphans = left == 0 ? [] : Self.keysStill(in: plan.ids, of: s)
            for key in orphans { key.withUnsafeBytes { s.drop($0) } }
            Self.forgetInputs(plan.ids, in: &s)
            // The tombstones and removal records the output keeps: dead, but no pass can drop
            // them while the segments that stay reach as low (Compactor+Plan.swift).
            if let output {
                let settled = kept.reduce(Int64(0)) { $0 + ($1.isTombstone || $1.isRemoval ? Int64($1.size) : 0) }
                s.segmentSet.apply(.settle(output.file.id, bytes: settled, until: plan.remainingMinimumSequence))
            }
            let failures = Self.writeTombstones(of: orphans, in: &s)
            s.stats.compactions += 1
            s.stats.compactionBytesRead += report.bytesRead
            s.stats.compactionBytesWritten += report.bytesWritten
            return (orphans.count, failures)
        }
        if orphans > 0 { options.logger.error("compaction found \(orphans) index entries without a valid record; keys dropped") }
        for error in failures { options.logger.warning("could not write the tombstone of a damaged key: \(error)") }
    }

    /// Adds the durable output to the store's segments (readers can follow an entry to either copy).
    private static func add(_ output: Output, firstSequence: UInt64, to s: inout StoreState) {
        s.segmentSet.apply(.add(output.file, usage: SegmentUsage(fileBytes: output.size, liveBytes: 0, liveCount: 0,
                                                                 minimumSequence: firstSequence, isCompacted: true,
                                                                 keyID: s.options.writtenKeyID),
                                hintBytes: output.hintBytes))
    }

    /// Writes the tombstones of keys that lost their record (cause `.damage`); they are already
    /// out of the index (damage read as such, never a failed read, which fails the pass before
    /// its switch). A failed append is counted and returned; the key stays absent in this process.
    private static func writeTombstones(of orphans: [[UInt8]], in s: inout StoreState) -> [CaskError] {
        var failures: [CaskError] = []
        let now = s.options.clock.now
        for key in orphans {
            do throws(CaskError) {
                try key.withBytes { k throws(CaskError) in try s.evict(k, cause: .damage, now: now) }
            } catch {
                s.stats.backgroundFailures += 1
                failures.append(error)
            }
        }
        return failures
    }

    /// Moves the index entry or live pin record of `kept[i]` to its output offset, with its live
    /// bytes (and, for an entry, its count) from the input's usage to the output's.
    private static func move(_ kept: [Kept], _ i: Int, of listing: Listing, to output: Output, in s: inout StoreState) {
        let out = output.file.id
        let r = kept[i]
        guard !r.isTombstone && !r.isRemoval else { return }
        let input = listing.inputs[r.input]
        let from = input.file.id
        let newOffset = output.offsets[i]
        let size = Int64(r.size)
        if r.isPin {
            let key = input.withKey(of: r) { Array($0) }
            guard s.keys.movePin(ofKey: key, from: from, offset: r.offset, sequence: r.sequence, to: out, newOffset: newOffset) else { return }
            s.segmentSet.moveLive(size, entries: 0, from: from, to: out)
            return
        }
        let moved = input.withKey(of: r) { k in
            s.keys.moveEntry(ofKey: k, from: from, offset: r.offset, sequence: r.sequence, to: out, newOffset: newOffset)
        }
        if moved {
            s.segmentSet.moveLive(size, entries: 1, from: from, to: out)
        }
    }

    /// Keys whose index entries point into one of `ids` (walks the whole index).
    private static func keysStill(in ids: [UInt32], of s: StoreState) -> [[UInt8]] {
        let inputIDs = Set(ids)
        var keys: [[UInt8]] = []
        s.index.forEach { key, e in if inputIDs.contains(e.segment) { keys.append(Array(key)) } }
        return keys
    }

    /// Forgets the input segments, and pin records still in them (not copied: not live).
    private static func forgetInputs(_ ids: [UInt32], in s: inout StoreState) {
        let inputIDs = Set(ids)
        for loc in s.keys.removePins(in: inputIDs) { s.account(ReleasedRecords(pin: loc)) }
        // Still on disk until the delete phase unlinks them: counted in `fileBytes` till then.
        s.segmentSet.apply(.retire(ids))
    }
}
