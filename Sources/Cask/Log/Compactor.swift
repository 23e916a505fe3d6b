import Foundation
import CaskFormat

/// Rewrites the live records of sealed segments into a new segment, then deletes the old ones
/// (format-spec.md, "Compaction"). Reads and writes go on meanwhile: the store's lock is held only
/// to choose inputs, to check which records are live (in batches), and to switch the index.
///
/// Crash safety, step by step: the output is written to `NNNNNNNNNN.cask.tmp`, synced, its hint
/// written (temporary file, sync, rename), then the output renamed into place and the directory
/// synced; only then does the index switch, and only after that are the inputs deleted, oldest
/// first, each unlink made durable before the next (see Compactor+DeletionOrder). A crash before the rename leaves a `.tmp` file that open deletes; after it,
/// the output and its inputs both hold the same records with the same sequence numbers, and
/// either copy is the right one.
struct Compactor {
    let state: StoreStateLock
    let directory: String
    let options: StoreOptions
    /// The store's lock file, which marks the deletion of inputs for readers (nil in tests that
    /// run a pass by hand).
    var lock: StoreLock? = nil
    /// Raised when the store closes: the pass stops (``CaskError/closed``) at its next step
    /// before the output is renamed into place, removing its partial output.
    var cancellation: CancellationFlag? = nil
    var fs: any CaskFileSystem { options.fileSystem }

    /// The records of the inputs, listed by phase 1.
    struct Listing {
        var inputs: [Input] = []
        var records: [Kept] = []
        var maximumSequence: UInt64 = 0
        /// The lowest sequence of each input's records (`.max` for one without records).
        var inputMinimums: [UInt64] = []

        /// The lowest sequence of any record in an input deleted after input `n`.
        func minimumSequence(deletedAfter n: Int) -> UInt64 {
            inputMinimums[(n + 1)...].min() ?? .max
        }
    }

    /// The output segment, once durable under its own name.
    struct Output {
        let file: SegmentFile
        let size: Int64
        let hintBytes: Int64
        /// The new offset of each kept record, in `kept` order.
        let offsets: [UInt32]
    }

    /// Runs one pass of `plan`. Throws on I/O failure, after removing its partial output; the
    /// inputs and the index are then untouched.
    func run(_ plan: Plan) throws(CaskError) -> CompactionReport {
        let started = DispatchTime.now().uptimeNanoseconds
        var report = CompactionReport()
        let (files, liveCount) = state.withLock { s in
            (plan.ids.compactMap { s.segments[$0] }, plan.ids.reduce(0) { $0 + (s.usage[$1]?.liveCount ?? 0) })
        }
        guard files.count == plan.ids.count else { return report }
        let listing = try listRecords(of: files, report: &report)
        let kept = try selectLive(listing, plan: plan, expecting: liveCount, report: &report)
        let output = try kept.isEmpty ? nil : writeOutput(kept, of: listing, plan: plan)
        if output == nil { try state.syncActiveOutsideLock() }
        report.bytesWritten = Int(output?.size ?? 0)
        switchIndex(to: output, kept: kept, of: listing, plan: plan, report: report)
        CrashPoint.compactionBeforeDelete.reach()
        try deleteInputs(plan, lowestSequence: listing.records.map(\.sequence).min() ?? 0)
        report.segmentsCompacted = plan.ids.count
        report.recordsCopied = kept.count
        report.bytesReclaimed = report.bytesRead - report.bytesWritten
        report.seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        return report
    }

    // MARK: Phase 1: read

    /// Reads the inputs (mapped when possible) and lists their valid records. The list grows
    /// by an estimate of each input's record count (from the sizes seen so far), not by doubling.
    private func listRecords(of files: [SegmentFile], report: inout CompactionReport) throws(CaskError) -> Listing {
        var listing = Listing()
        for file in files {
            let size = Int(try fs.size(file.handle))
            let input = try Input.open(file, size: size, fs: fs)
            let n = listing.inputs.count
            if report.bytesRead > 0 {
                listing.records.reserveCapacity(listing.records.count + size * listing.records.count / report.bytesRead * 21 / 20)
            }
            var minimum = UInt64.max
            var releasedBelow = 0   // pages behind the scan go back every 4 MiB, not after the whole input
            _ = try input.withBytes { raw throws(CaskError) in
                try SegmentScanner.scan(raw, file: file.path) { h, offset in
                    if offset - releasedBelow >= 4 << 20 {
                        input.releasePages(releasedBelow..<offset)
                        releasedBelow = offset
                    }
                    listing.records.append(Kept(
                        sequence: h.sequence, accessTime: h.writeTime, input: n, offset: offset, size: h.encodedSize,
                        isTombstone: h.isTombstone, isPin: h.isPin, isRemoval: h.isRemoval))
                    listing.maximumSequence = max(listing.maximumSequence, h.sequence)
                    minimum = min(minimum, h.sequence)
                }
            }
            listing.inputMinimums.append(minimum)
            input.releasePages(0..<size)
            listing.inputs.append(input)
            report.bytesRead += size
            try cancellation?.check()
        }
        return listing
    }

    // MARK: Phase 2: choose

    /// Keeps the records the index still points at, and the tombstones that may still hide an
    /// older record; in sequence order. Checked under the lock in slices bounded by time that let
    /// waiting writers in first (``StoreStateLock/forEachInSlices(_:between:_:)``), so a writer
    /// waits for at most one slice.
    /// `expecting`: the inputs' live entries when the pass began (the list's first capacity).
    private func selectLive(_ listing: Listing, plan: Plan, expecting liveCount: Int, report: inout CompactionReport) throws(CaskError) -> [Kept] {
        let orderSafe = Self.tombstonesSafeToDeleteInOrder(listing)
        var kept: [Kept] = []
        kept.reserveCapacity(liveCount * 21 / 20 + 16)
        var residency = InputResidency(listing.inputs)
        defer { residency.endPhase() }
        try state.forEachInSlices(listing.records.indices, between: { () throws(CaskError) in try cancellation?.check() }) { s, n in
            let r = listing.records[n]
            let input = listing.inputs[r.input]
            residency.read(r.input, upTo: r.offset)
            let entry = input.withKey(of: r) { s.index.entry(forKey: $0) }
            if r.isRemoval {
                if Self.removalIsNeeded(r, of: listing, plan: plan, sweeping: s.sweeping) {
                    kept.append(r)
                } else {
                    report.removalsDropped += 1
                }
            } else if r.isPin {
                if Self.isLivePin(r, key: input.withKey(of: r) { Array($0) }, entry: entry, in: input, state: s) { kept.append(r) }
            } else if r.isTombstone {
                if Self.tombstoneIsNeeded(r, hides: input.hides(r), entry: entry, plan: plan, olderGoFirst: orderSafe[n]) {
                    kept.append(r)
                } else {
                    report.tombstonesDropped += 1
                }
            } else if let e = entry, e.segment == input.file.id, Int(e.offset) == r.offset, e.sequence == r.sequence {
                var live = r
                live.accessTime = e.accessTime
                kept.append(live)
            }
            return true
        }
        kept.sort { $0.sequence < $1.sequence }
        return kept
    }

    /// A pin record is copied only while it is its key's live pin record: the newest one, and
    /// its value record still the key's entry.
    private static func isLivePin(_ r: Kept, key: [UInt8], entry: IndexEntry?, in input: Input, state s: StoreState) -> Bool {
        guard let loc = s.keys.pinRecords[key] else { return false }
        let target = input.hides(r)
        return loc.segment == input.file.id && Int(loc.offset) == r.offset && loc.sequence == r.sequence
            && loc.target == target && entry?.sequence == target
    }

    /// A tombstone is dropped when a newer record of its key exists, or when nothing it could hide
    /// can outlive this pass: every segment that stays starts above the newest sequence it hides
    /// (or, when that is unknown, above the tombstone itself), and every older record of its key
    /// in the inputs is deleted no later than the tombstone (`olderGoFirst`), so that no crash
    /// or reader halfway through the deletions finds such a record without it.
    private static func tombstoneIsNeeded(_ r: Kept, hides: UInt64, entry: IndexEntry?, plan: Plan, olderGoFirst: Bool) -> Bool {
        let superseded = entry.map { $0.sequence > r.sequence } ?? false
        let hidesOnlyInputs = hides != 0 && hides < plan.remainingMinimumSequence
        return !(superseded || olderGoFirst && (hidesOnlyInputs || r.sequence < plan.remainingMinimumSequence))
    }

    /// A removal record is dropped only when no record it removes can outlive this pass: its
    /// walk of the index is done (until then the output may copy records it removes); every
    /// segment that stays and holds dead bytes starts at or above its sequence (a segment whose
    /// bytes are all live holds none: no record it removes is in the index); and so does every
    /// input deleted after its own (a crash or a reader halfway through the deletions never
    /// finds a record it removes without it). Records it removes are not copied.
    private static func removalIsNeeded(_ r: Kept, of listing: Listing, plan: Plan, sweeping: [UInt64: [UInt8]]) -> Bool {
        sweeping[r.sequence] != nil || plan.remainingMinimumSequenceWithDeadBytes < r.sequence
            || listing.minimumSequence(deletedAfter: r.input) < r.sequence
    }

    // MARK: Phase 3: write

    /// Writes the output under a temporary name, syncs it, writes its hint, makes the records
    /// that made inputs dead durable, renames the output into place and syncs the directory. On
    /// failure everything it wrote is removed again.
    private func writeOutput(_ kept: [Kept], of listing: Listing, plan: Plan) throws(CaskError) -> Output {
        let header = SegmentHeader(
            id: UInt64(plan.outputID), kind: .compacted, flags: 0,
            minimumSequence: kept[0].sequence, sequenceLimit: listing.maximumSequence + 1, keyID: options.writtenKeyID)
        let path = FileNames.join(directory, FileNames.segment(plan.outputID))
        let temporary = path + FileNames.temporarySuffix
        var renamed = false
        do throws(CaskError) {
            // Declared inside: on a throw the temporary file is closed before it is removed.
            var writer = try SegmentWriter.output(header, at: temporary, fs: fs)
            let offsets = try copy(kept, of: listing, to: &writer)
            try cancellation?.check()
            try writer.flush()
            CrashPoint.compactionOutputWritten.reach()
            try writer.sync()
            try cancellation?.check()
            let hintBytes = try StoreFiles.writeHint(writer.hintFile(), of: plan.outputID, in: directory, keyring: options.keyring, fs: fs)
            // Records that made input records dead (overwrites, removes, evictions) were appended
            // before the liveness check: make them durable before the inputs can go, or a crash
            // could lose both the old value and its replacement.
            try state.syncActiveOutsideLock()
            CrashPoint.compactionBeforeRename.reach()
            try fs.rename(temporary, to: path)
            renamed = true
            try fs.syncDirectory(directory)
            CrashPoint.compactionBeforeSwitch.reach()
            let handle = try fs.open(path, mode: .read)
            let file = SegmentFile(id: plan.outputID, path: path, handle: handle, fileSystem: fs, mapLength: Int(writer.size))
            return Output(file: file, size: writer.size, hintBytes: hintBytes, offsets: offsets)
        } catch {
            removeFailedOutput(plan: plan, temporary: temporary, renamed: renamed, lowestSequence: kept[0].sequence)
            throw error
        }
    }

    /// Copies the kept records, in order, to the output; returns their new offsets.
    private func copy(_ kept: [Kept], of listing: Listing, to writer: inout SegmentWriter) throws(CaskError) -> [UInt32] {
        var offsets: [UInt32] = []
        offsets.reserveCapacity(kept.count)
        var residency = InputResidency(listing.inputs)
        defer { residency.endPhase() }
        var resealer = options.keyring.map(Resealer.init)
        for (n, r) in kept.enumerated() {
            if n & 4095 == 4095 { try cancellation?.check() }
            let input = listing.inputs[r.input]
            residency.read(r.input, upTo: r.offset)
            let offset = try input.withBytes { raw throws(CaskError) -> Int64 in
                let bytes = UnsafeRawBufferPointer(rebasing: raw[r.offset..<(r.offset + r.size)])
                guard case .record(let h) = RecordCodec.decode(bytes, at: 0) else {
                    throw .corruption(file: input.file.path, offset: Int64(r.offset), reason: "record changed during compaction")
                }
                if let sealed = try resealer?.reseal(bytes, header: h, from: input.file.id, to: &writer, accessTime: r.accessTime) { return sealed }
                return try writer.appendEncoded(bytes, header: h, accessTime: r.accessTime)
            }
            offsets.append(UInt32(offset))
        }
        return offsets
    }

    /// Removes a failed pass's output and hint. An output renamed into place but not made durable
    /// (the directory sync failed) must not outlive the pass unknown to the index, or a later pass
    /// could drop a tombstone that its copies still need.
    /// Harmless `try?`s: each removal is of a file no index entry points at, and what a failed
    /// one leaves is removed by the next open (temporary and orphan files) or kept track of
    /// (`lingeringMinimumSequence`) until then.
    private func removeFailedOutput(plan: Plan, temporary: String, renamed: Bool, lowestSequence: UInt64) {
        try? fs.remove(temporary)
        try? fs.remove(FileNames.join(directory, FileNames.hint(plan.outputID)))
        guard renamed else { return }
        if (try? fs.remove(FileNames.join(directory, FileNames.segment(plan.outputID)))) == nil {
            apply([.lingering(minimumSequence: lowestSequence)])
        }
        try? fs.syncDirectory(directory)
    }

    // MARK: Phase 5: delete

    /// Deletes the inputs, durably, before anything relies on their absence. On failure the
    /// inputs may come back after a crash: until the next open, every tombstone that could hide
    /// one of their records is kept.
    private func deleteInputs(_ plan: Plan, lowestSequence: UInt64) throws(CaskError) {
        // A reader listing the directory halfway through would see some inputs without the
        // others (say, an old value without the tombstone that hid it, both dropped from the
        // output): the lock file's generation is odd meanwhile, and readers load again.
        let deletions = { () throws(CaskError) in
            // In the plan's order, each unlink durable before the next: whatever a crash keeps
            // is a prefix of the order, which `tombstonesSafeToDeleteInOrder` made safe.
            for (n, id) in plan.ids.enumerated() {
                try fs.remove(FileNames.join(directory, FileNames.hint(id)))
                try fs.remove(FileNames.join(directory, FileNames.segment(id)))
                apply([.unlinked(id)])
                try fs.syncDirectory(directory)
                if n == 0 { CrashPoint.compactionDuringDelete.reach() }
            }
        }
        do throws(CaskError) {
            if let lock { try lock.whileDeleting(deletions) } else { try deletions() }
        } catch {
            // Left for the next open to remove; no longer counted, or writes would wait for a
            // compaction that cannot free them.
            apply([.lingering(minimumSequence: lowestSequence)] + plan.ids.map { .unlinked($0) })
            throw error
        }
    }

    /// Applies `edits` to the segment set in one slice of the lock, in order.
    private func apply(_ edits: [SegmentSet.Edit]) {
        state.withLock { s in for edit in edits { s.segmentSet.apply(edit) } }
    }
}
