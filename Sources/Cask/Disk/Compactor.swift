import Foundation

/// Rewrites the live records of sealed segments into a new segment, then deletes the old ones
/// (format-spec.md, "Compaction"). Reads and writes go on meanwhile: the store's lock is held only
/// to choose inputs, to check which records are live (in batches), and to switch the index.
///
/// Crash safety, step by step: the output is written to `NNNNNNNNNN.cask.tmp`, synced, its hint
/// written (temporary file, sync, rename), then the output renamed into place and the directory
/// synced; only then does the index switch, and only after that are the inputs deleted (with a
/// directory sync). A crash before the rename leaves a `.tmp` file that open deletes; after it,
/// the output and its inputs both hold the same records with the same sequence numbers, and
/// either copy is the right one.
struct Compactor {
    let state: Locked<StoreState>
    let directory: String
    let options: StoreOptions
    var fs: any CaskFileSystem { options.fileSystem }

    /// One input segment.
    private struct Input {
        let file: SegmentFile
        let size: Int
        let bytes: [UInt8]?   // nil when mapped
        func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(CaskError) -> R) throws(CaskError) -> R {
            if let bytes { return try bytes.withBytes(body) }
            return try body(file.mappedBytes(at: 0, count: size)!)
        }
    }

    /// A record chosen to survive.
    private struct Kept {
        let sequence: UInt64
        let input: Int
        let offset: Int
        let size: Int
        let isTombstone: Bool
        /// A pin record (kept only while it is its key's live pin record).
        let isPin: Bool
        /// For a tombstone: the newest sequence it hides (0 = unknown). For a pin record: the
        /// sequence of the value record it modifies.
        let hides: UInt64
        var accessTime: Int64
    }

    /// Which segments one pass rewrites.
    struct Plan {
        var ids: [UInt32]
        /// The lowest minimum sequence of every segment that stays: a tombstone below it has no
        /// older record left to hide.
        var remainingMinimumSequence: UInt64
        var outputID: UInt32
    }

    /// Chooses inputs under the lock: sealed segments whose dead share reaches the policy's ratio
    /// (any dead share at all under byte-limit pressure or when `force`d), plus small segments worth
    /// merging, up to one pass's worth of live bytes. Also tombstones expired items first, so
    /// that their bytes can go.
    static func plan(_ s: inout StoreState, force: Bool, now: Int64) -> Plan? {
        // Expired items are tombstoned first so that their bytes can go: on every forced pass,
        // at most once a second otherwise (the sweep walks the whole index).
        if (s.expiringCount > 0 || s.ageLimitMilliseconds > 0) && (force || now - s.lastExpirySweep >= 1000) {
            _ = try? s.removeExpired(now: now)
            s.lastExpirySweep = now
        }
        let pressure = s.limits.byteLimit.map { s.fileBytes > $0 } ?? false
        let threshold = s.options.compaction.garbageRatio
        let passBytes = Int64(s.options.compaction.maximumPassBytes > 0 ? s.options.compaction.maximumPassBytes : s.options.segmentSize)
        let small = Int64(s.options.segmentSize / 4)
        var candidates: [(id: UInt32, garbage: Double, live: Int64)] = []
        let awaiting = s.awaitingSync.isEmpty ? [] : s.segmentsAwaitingSync
        for (id, u) in s.usage where id != s.active.id && !awaiting.contains(id) {
            let payload = u.fileBytes - Int64(Format.segmentHeaderSize)
            let garbage = payload > 0 ? Double(max(0, payload - u.liveBytes)) / Double(payload) : 1
            let isSmall = u.fileBytes < small
            if garbage >= threshold || ((force || pressure) && garbage > 0) || isSmall {
                candidates.append((id, garbage, u.liveBytes))
            }
        }
        // Small segments alone are only worth merging when there are several.
        if candidates.count == 1, let only = candidates.first, only.garbage < threshold, !(force || pressure) && only.garbage == 0 {
            return nil
        }
        candidates.sort { ($0.garbage, $1.id) > ($1.garbage, $0.id) }
        var chosen: [UInt32] = []
        var live: Int64 = 0
        for c in candidates {
            if !chosen.isEmpty && live + c.live > passBytes { continue }
            chosen.append(c.id)
            live += c.live
        }
        guard !chosen.isEmpty else { return nil }
        if chosen.count == 1, let u = s.usage[chosen[0]], u.liveBytes == u.fileBytes - Int64(Format.segmentHeaderSize) {
            return nil   // one segment with nothing dead: rewriting it gains nothing
        }
        let chosenSet = Set(chosen)
        let remaining = min(s.lingeringMinimumSequence,
                            s.usage.filter { !chosenSet.contains($0.key) }.map(\.value.minimumSequence).min() ?? .max)
        let outputID = s.nextSegmentID
        s.nextSegmentID &+= 1
        return Plan(ids: chosen.sorted(), remainingMinimumSequence: remaining, outputID: outputID)
    }

    /// Runs one pass of `plan`. Throws on I/O failure, after removing its partial output; the
    /// inputs and the index are then untouched.
    func run(_ plan: Plan) throws(CaskError) -> CompactionReport {
        let started = DispatchTime.now().uptimeNanoseconds
        var report = CompactionReport()
        let files: [SegmentFile] = state.withLock { s in plan.ids.compactMap { s.segments[$0] } }
        guard files.count == plan.ids.count else { return report }

        // 1. Read the inputs (mapped when possible) and list their valid records.
        var inputs: [Input] = []
        var records: [Kept] = []
        var maxSequence: UInt64 = 0
        for file in files {
            let size = Int(try fs.size(file.handle))
            let input = file.mappedBytes(at: 0, count: size) != nil
                ? Input(file: file, size: size, bytes: nil)
                : Input(file: file, size: size, bytes: try fs.readWholeFile(file.handle))
            let n = inputs.count
            _ = try input.withBytes { raw throws(CaskError) in
                try SegmentScanner.scan(raw, file: file.path) { h, offset in
                    records.append(Kept(sequence: h.sequence, input: n, offset: offset, size: h.encodedSize,
                                        isTombstone: h.isTombstone, isPin: h.isPin,
                                        hides: h.isTombstone || h.isPin ? UInt64(bitPattern: h.expiry) : 0,
                                        accessTime: h.writeTime))
                    maxSequence = max(maxSequence, h.sequence)
                }
            }
            inputs.append(input)
            report.bytesRead += Int64(size)
        }

        // 2. Keep the records the index still points at, and the tombstones that may still hide
        //    an older record. Checked under the lock in batches, so writers are not held up long.
        var kept: [Kept] = []
        var start = 0
        while start < records.count {
            let end = min(records.count, start + 4096)
            state.withLock { s in
                for var r in records[start..<end] {
                    let input = inputs[r.input]
                    let key: IndexEntry? = (try? input.withBytes { raw throws(CaskError) in
                        s.index.entry(forKey: UnsafeRawBufferPointer(rebasing: raw[(r.offset + Format.recordHeaderSize)..<(r.offset + Format.recordHeaderSize + Int(raw.u16(r.offset + 30)))]))
                    }) ?? nil
                    if r.isPin {
                        // Copied only while it is the key's live pin record: the newest one, and
                        // its value record still the key's entry.
                        let live = (try? input.withBytes { raw throws(CaskError) -> Bool in
                            let keyBytes = Array(raw[(r.offset + Format.recordHeaderSize)..<(r.offset + Format.recordHeaderSize + Int(raw.u16(r.offset + 30)))])
                            guard let loc = s.pinRecords[keyBytes] else { return false }
                            return loc.segment == input.file.id && Int(loc.offset) == r.offset && loc.sequence == r.sequence
                                && loc.target == r.hides && key?.sequence == r.hides
                        }) ?? false
                        if live { kept.append(r) }
                    } else if r.isTombstone {
                        let superseded = key.map { $0.sequence > r.sequence } ?? false
                        // Droppable when nothing it could hide can outlive this pass: every
                        // segment that stays starts above the newest sequence it hides (or,
                        // when that is unknown, above the tombstone itself).
                        let hidesOnlyInputs = r.hides != 0 && r.hides < plan.remainingMinimumSequence
                        if superseded || hidesOnlyInputs || r.sequence < plan.remainingMinimumSequence {
                            report.tombstonesDropped += 1
                        } else {
                            kept.append(r)
                        }
                    } else if let e = key, e.segment == input.file.id, Int(e.offset) == r.offset, e.sequence == r.sequence {
                        r.accessTime = e.accessTime
                        kept.append(r)
                    }
                }
            }
            start = end
        }
        kept.sort { $0.sequence < $1.sequence }

        // 3. Write the output (temporary name), sync it, write its hint, rename it into place.
        var output: SegmentFile?
        var outputHintBytes: Int64 = 0
        var newOffsets: [Int] = []
        if !kept.isEmpty {
            let header = SegmentHeader(
                id: UInt64(plan.outputID), kind: .compacted, flags: 0,
                minimumSequence: kept[0].sequence, sequenceLimit: maxSequence + 1)
            let name = FileNames.segment(plan.outputID)
            let path = FileNames.join(directory, name)
            let temporary = path + FileNames.temporarySuffix
            let handle = try fs.open(temporary, mode: .createTruncate)
            var renamed = false
            do throws(CaskError) {
                var hints = HintBuilder()
                let buffer = WriteBuffer(capacity: 1 << 20)
                let headerBytes = header.encoded()
                buffer.append(size: headerBytes.count) { out in headerBytes.withUnsafeBytes { out.copyMemory(from: $0) } }
                var offset = Format.segmentHeaderSize
                for r in kept {
                    try inputs[r.input].withBytes { raw throws(CaskError) in
                        let bytes = UnsafeRawBufferPointer(rebasing: raw[r.offset..<(r.offset + r.size)])
                        guard case .record(let h) = RecordCodec.decode(bytes, at: 0) else {
                            throw .corruption(file: inputs[r.input].file.path, offset: Int64(r.offset), reason: "record changed during compaction")
                        }
                        buffer.append(size: r.size) { $0.copyMemory(from: bytes) }
                        hints.add(h, offset: offset, key: UnsafeRawBufferPointer(rebasing: bytes[Format.recordHeaderSize..<(Format.recordHeaderSize + h.keyLength)]), accessTime: r.accessTime)
                    }
                    newOffsets.append(offset)
                    offset += r.size
                    if buffer.count >= 1 << 20 {
                        try buffer.withBytes { bytes throws(CaskError) in try fs.appendAll(handle, bytes) }
                        buffer.reset()
                    }
                }
                try buffer.withBytes { bytes throws(CaskError) in try fs.appendAll(handle, bytes) }
                CrashPoint.compactionOutputWritten.reach()
                try fs.sync(handle)
                let hintFile = hints.encoded(segmentID: plan.outputID, segmentSize: Int64(offset))
                try StoreFiles.writeAtomically(hintFile, to: FileNames.hint(plan.outputID), in: directory, fs: fs)
                outputHintBytes = Int64(hintFile.count)
                // Records that made input records dead (overwrites, removes, evictions) were
                // appended before the liveness check: make them durable before the inputs can
                // go, or a crash could lose both the old value and its replacement.
                try state.withLock { s throws(CaskError) in try s.syncActive() }
                CrashPoint.compactionBeforeRename.reach()
                try fs.rename(temporary, to: path)
                renamed = true
                try fs.syncDirectory(directory)
                CrashPoint.compactionBeforeSwitch.reach()
                report.bytesWritten = Int64(offset)
                output = SegmentFile(id: plan.outputID, path: path, handle: handle, fileSystem: fs, mapLength: offset)
            } catch {
                fs.close(handle)
                try? fs.remove(temporary)
                try? fs.remove(FileNames.join(directory, FileNames.hint(plan.outputID)))
                if renamed {
                    // Renamed into place but not made durable (the directory sync failed): the
                    // output must not outlive this pass unknown to the index, or a later pass
                    // could drop a tombstone that its copies still need.
                    if (try? fs.remove(path)) == nil {
                        let lowest = kept[0].sequence
                        state.withLock { $0.lingeringMinimumSequence = min($0.lingeringMinimumSequence, lowest) }
                    }
                    try? fs.syncDirectory(directory)
                }
                throw error
            }
        }

        if output == nil { try state.withLock { s throws(CaskError) in try s.syncActive() } }

        // 4. Switch the index to the output, then forget the inputs.
        let orphans: [[UInt8]] = state.withLock { s in
            var live: Int64 = 0
            var switched = 0
            let expected = plan.ids.reduce(0) { $0 + (s.usage[$1]?.liveCount ?? 0) }
            if let output {
                for (i, r) in kept.enumerated() where r.isPin {
                    let input = inputs[r.input]
                    _ = try? input.withBytes { raw throws(CaskError) in
                        let keyLength = Int(raw.u16(r.offset + 30))
                        let key = Array(raw[(r.offset + Format.recordHeaderSize)..<(r.offset + Format.recordHeaderSize + keyLength)])
                        if var loc = s.pinRecords[key], loc.segment == input.file.id, Int(loc.offset) == r.offset, loc.sequence == r.sequence {
                            // Still live: it moves to the output, its bytes with it.
                            loc.segment = output.id
                            loc.offset = UInt32(newOffsets[i])
                            s.pinRecords[key] = loc
                            live += Int64(r.size)
                        }
                    }
                }
                for (i, r) in kept.enumerated() where !r.isTombstone && !r.isPin {
                    let input = inputs[r.input]
                    _ = try? input.withBytes { raw throws(CaskError) in
                        let keyLength = Int(raw.u16(r.offset + 30))
                        let key = UnsafeRawBufferPointer(rebasing: raw[(r.offset + Format.recordHeaderSize)..<(r.offset + Format.recordHeaderSize + keyLength)])
                        s.index.withEntry(forKey: key) { e in
                            if e.segment == input.file.id && Int(e.offset) == r.offset && e.sequence == r.sequence {
                                e.segment = output.id
                                e.offset = UInt32(newOffsets[i])
                                live += Int64(r.size)
                                switched += 1
                            }
                        }
                    }
                }
                s.segments[output.id] = output
                s.usage[output.id] = SegmentUsage(fileBytes: report.bytesWritten, liveBytes: live, liveCount: switched,
                                                  minimumSequence: kept[0].sequence, isCompacted: true)
                s.hintBytes[output.id] = outputHintBytes
            }
            // Entries still pointing at an input had no valid record to copy: drop them. The
            // per-segment entry counts say whether there are any, so the index is walked only then.
            var orphans: [[UInt8]] = []
            if switched != expected {
                let inputIDs = Set(plan.ids)
                s.index.forEach { key, e in if inputIDs.contains(e.segment) { orphans.append(Array(key)) } }
            }
            for key in orphans { key.withUnsafeBytes { s.drop($0) } }
            // Pin records still in an input had no valid record to copy (or were not live): gone.
            if !s.pinRecords.isEmpty {
                let inputIDs = Set(plan.ids)
                for (key, loc) in s.pinRecords where inputIDs.contains(loc.segment) {
                    s.pinRecords[key] = nil
                    s.forgetPinRecord(loc)
                }
            }
            for id in plan.ids {
                s.segments[id] = nil
                s.usage[id] = nil
                s.hintBytes[id] = nil
            }
            s.stats.compactions += 1
            s.stats.compactionBytesRead += report.bytesRead
            s.stats.compactionBytesWritten += report.bytesWritten
            return orphans
        }
        if !orphans.isEmpty {
            options.logger.error("compaction found \(orphans.count) index entries without a valid record; keys dropped")
            let now = options.clock.milliseconds()
            state.withLock { s in
                for key in orphans { _ = try? key.withBytes { k throws(CaskError) in try s.evict(k, cause: .damage, now: now) } }
            }
        }
        CrashPoint.compactionBeforeDelete.reach()

        // 5. Delete the inputs, durably, before anything relies on their absence.
        do throws(CaskError) {
            for (n, id) in plan.ids.enumerated() {
                try fs.remove(FileNames.join(directory, FileNames.hint(id)))
                try fs.remove(FileNames.join(directory, FileNames.segment(id)))
                if n == 0 { CrashPoint.compactionDuringDelete.reach() }
            }
            try fs.syncDirectory(directory)
        } catch {
            // The inputs may come back after a crash: until the next open, keep every tombstone
            // that could hide one of their records.
            let lowest = records.map(\.sequence).min() ?? 0
            state.withLock { s in s.lingeringMinimumSequence = min(s.lingeringMinimumSequence, lowest) }
            throw error
        }

        report.segmentsCompacted = plan.ids.count
        report.recordsCopied = kept.count
        report.bytesReclaimed = report.bytesRead - report.bytesWritten
        report.seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        return report
    }
}
