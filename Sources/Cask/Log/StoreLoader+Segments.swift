import CaskFormat
import Logging

/// Loading one segment: from its hint file, or by scanning it (recovery steps 3, 5, 6 and 7).
extension StoreLoader {
    /// Applies a valid hint file; false (after logging) when it is missing or invalid. A read
    /// that fails throws: the segment is not scanned around it (with damage in the segment, a
    /// scan without its hint would drop more keys than the hint's list of what was lost).
    mutating func loadHint(_ segment: SegmentFile, size: Int64) throws(CaskError) -> Bool {
        let path = FileNames.join(directory, FileNames.hint(segment.id))
        guard let handle = try fs.openIfPresent(path) else { return false }
        defer { fs.close(handle) }
        var bytes = try fs.readWholeFile(handle)
        if let problem = HintSeal.open(&bytes, keyring: options.keyring) {
            logger.warning("hint file \(path) is not used (\(problem)); scanning its segment instead")
            return false
        }
        let id = segment.id
        var local = index
        index = KeyIndex()   // keep `local` uniquely referenced: no copy-on-write of the whole index
        var maxSeq = maximumSequence
        var found: [FoundPin] = []
        var foundRemovals = removals
        let failure = bytes.withUnsafeBytes { raw in
            HintFile.parse(raw, segmentID: UInt64(id), segmentSize: UInt64(size)) { e, keyBytes in
                maxSeq = max(maxSeq, e.sequence)
                if e.kind == .removal {
                    foundRemovals.add(keyBytes, tagged: e.flags & Format.RecordFlag.tagged != 0, sequence: e.sequence)
                    return
                }
                if e.kind == .pin {
                    found.append(FoundPin(key: Array(keyBytes), pinned: e.flags & Format.RecordFlag.pinned != 0, location: PinRecordLocation(
                        segment: id, offset: UInt32(e.offset), size: e.recordSize, sequence: e.sequence, target: UInt64(bitPattern: e.expiry))))
                    return
                }
                let entry = IndexEntry(
                    segment: id, offset: UInt32(e.offset), storedLength: UInt32(e.storedLength), sequence: e.sequence,
                    expiry: e.kind == .tombstone ? 0 : e.expiry, accessTime: e.accessTime,
                    flags: e.kind == .tombstone ? IndexEntry.tombstoneFlag : e.flags, keyLength: UInt16(e.keyLength))
                Self.apply(entry, key: keyBytes, to: &local)
            }
        }
        index = local
        switch failure {
        case nil:
            maximumSequence = maxSeq
            pins += found
            removals = foundRemovals
            return true
        case .newerVersion(let v):
            throw .unsupportedFormatVersion(file: path, found: v, supported: Format.version)
        case .invalid(let reason):
            logger.warning("hint file \(path) is invalid (\(reason)); scanning its segment instead")
            return false
        }
    }

    /// The records a segment's intact hint file lists (offset: sequence and key), read against
    /// the segment size the hint records: after the segment was damaged or cut, exactly what it
    /// held. Nil when the hint is missing or fails its own checks; a failed read throws (without
    /// the list, damage would cost every key the salvage rule reaches).
    func hintedRecords(of segment: SegmentFile) throws(CaskError) -> [Int: LostRecord]? {
        let path = FileNames.join(directory, FileNames.hint(segment.id))
        guard let handle = try fs.openIfPresent(path) else { return nil }
        defer { fs.close(handle) }
        var bytes = try fs.readWholeFile(handle)
        guard HintSeal.open(&bytes, keyring: options.keyring) == nil else { return nil }
        var records: [Int: LostRecord] = [:]
        let failure = bytes.withUnsafeBytes { raw -> HintFile.Failure? in
            guard let size = HintFile.recordedSegmentSize(raw) else { return .invalid("too short") }
            return HintFile.parse(raw, segmentID: UInt64(segment.id), segmentSize: size) { e, key in
                records[Int(e.offset)] = LostRecord(key: Array(key), sequence: e.sequence, isRemoval: e.kind == .removal,
                                                    isTagged: e.flags & Format.RecordFlag.tagged != 0)
            }
        }
        return failure == nil ? records : nil
    }

    /// Scans one segment into the index. Returns the segment's size after recovery, or nil when it
    /// held nothing and was removed. With `listed` (the records its intact hint lists), damage
    /// costs only the records the hint lists that the scan no longer finds. Steps: find the
    /// torn tail of the newest segment, index the records before it, then settle the segment
    /// (an empty newest one removed, the tail cut, damage noted).
    mutating func scan(_ segment: Loaded, isLast: Bool, nextLogMinimum: UInt64?, listed: [Int: LostRecord]? = nil) throws(CaskError) -> Int64? {
        stats.segmentsScanned += 1
        let file = segment.file
        let bytes = try fs.readWholeFile(file.handle)
        let tailStart = isLast ? try tornTailStart(of: bytes, file: file) : .max
        let (summary, kept) = try indexRecords(of: bytes, in: file, before: tailStart, keepingOffsets: listed != nil)
        maximumSequence = max(maximumSequence, summary.maximumSequence)
        if let h = segment.header {
            maximumSequence = max(maximumSequence, h.minimumSequence, h.sequenceLimit > 0 ? h.sequenceLimit - 1 : 0)
        }
        if isLast && summary.recordCount == 0 && segment.header == nil {
            // Created but never completed (a crash before its header was durable): nothing in it
            // was ever acknowledged.
            if readOnly { return nil }
            try fs.remove(file.path)
            try fs.syncDirectory(directory)
            return nil
        }
        return try settle(segment, size: bytes.count, summary: summary, tailStart: tailStart, kept: kept,
                          listed: listed, nextLogMinimum: nextLogMinimum)
    }

    /// Where the torn tail of the newest log segment starts: everything from its first damaged
    /// byte on (StoreDirectory.tornTailStart), found by a pre-scan; `.max` when there is none.
    private func tornTailStart(of bytes: [UInt8], file: SegmentFile) throws(CaskError) -> Int {
        let pre = try bytes.withBytes { raw throws(CaskError) in try SegmentScanner.scan(raw, file: file.path) { _, _ in } }
        return StoreDirectory.tornTailStart(of: pre) ?? .max
    }

    /// Indexes the records of `bytes` that start before `tailStart`: values and tombstones into
    /// the index, pin records (with encryption, only those whose seal holds) and removal
    /// records aside. Returns the scan's summary and, when `keepingOffsets`, the sequence of
    /// each record found by its offset.
    private mutating func indexRecords(of bytes: [UInt8], in file: SegmentFile, before tailStart: Int,
                                       keepingOffsets: Bool) throws(CaskError) -> (SegmentScanner.Summary, [Int: UInt64]) {
        var local = index
        index = KeyIndex()   // keep `local` uniquely referenced: no copy-on-write of the whole index
        defer { index = local }
        let id = file.id, keyring = options.keyring
        var found: [FoundPin] = [], kept: [Int: UInt64] = [:], forgedPins: [Int] = []
        var foundRemovals = removals
        let summary = try bytes.withBytes { raw throws(CaskError) in
            try SegmentScanner.scan(raw, file: file.path) { h, offset in
                guard offset < tailStart else { return }
                if keepingOffsets { kept[offset] = h.sequence }
                let key = UnsafeRawBufferPointer(rebasing: raw[(offset + Format.recordHeaderSize)..<(offset + Format.recordHeaderSize + h.keyLength)])
                if h.isRemoval { return foundRemovals.add(key, tagged: h.isTagged, sequence: h.sequence) }
                if h.isPin {
                    guard keyring?.authenticates(h, in: raw, at: offset, segmentID: id) ?? true else { return forgedPins.append(offset) }
                    return found.append(FoundPin(key: Array(key), pinned: h.isPinned, location: PinRecordLocation(
                        segment: id, offset: UInt32(offset), size: h.encodedSize, sequence: h.sequence, target: h.pinTarget)))
                }
                let entry = IndexEntry(
                    segment: id, offset: UInt32(offset), storedLength: UInt32(h.storedLength), sequence: h.sequence,
                    expiry: h.kind == .tombstone ? 0 : h.expiry, accessTime: h.writeTime,
                    flags: h.kind == .tombstone ? IndexEntry.tombstoneFlag : h.flags, keyLength: UInt16(h.keyLength))
                Self.apply(entry, key: key, to: &local)
            }
        }
        pins += found
        removals = foundRemovals
        noteForgedPins(forgedPins, in: file)
        return (summary, kept)
    }

    /// After the records are indexed: notes a damaged header, cuts the torn tail, notes the
    /// damage (exactly, from the hint's list, when `listed`; else with the salvage bound), and
    /// queues a hint file for a segment without damage. Returns the segment's size.
    private mutating func settle(_ segment: Loaded, size: Int, summary: SegmentScanner.Summary, tailStart: Int, kept: [Int: UInt64],
                                 listed: [Int: LostRecord]?, nextLogMinimum: UInt64?) throws(CaskError) -> Int64 {
        let file = segment.file
        if summary.headerDamaged {
            stats.damagedRanges += 1
            logger.error("segment header of \(file.path) is damaged; its records were scanned")
        }
        if tailStart != .max { try cutTornTail(file, at: tailStart, of: size) }
        let damage = summary.damage.filter { $0.start < tailStart }
        if let listed {
            // The hint says exactly what was lost: no salvage bound for this segment.
            noteDamage(damage, in: segment, nextLogMinimum: nil, raisesBound: false)
            let lost = listed.filter { kept[$0.key] != $0.value.sequence }.map(\.value)
            lostRecords += lost.filter { !$0.isRemoval }
            // A removal record the intact hint lists was durable: it applies even if its bytes are gone.
            for r in lost where r.isRemoval { r.key.withUnsafeBytes { removals.add($0, tagged: r.isTagged, sequence: r.sequence) } }
        } else {
            noteDamage(damage, in: segment, nextLogMinimum: nextLogMinimum)
        }
        if damage.isEmpty && !summary.headerDamaged { hintsToWrite.append(file.id) }
        return tailStart != .max ? Int64(tailStart) : Int64(size)
    }

    /// Pin records of an encrypted store that were not applied because their seal does not hold
    /// (unsealed, under an unknown key, or changed): damage, counted and logged.
    mutating func noteForgedPins(_ offsets: [Int], in file: SegmentFile) {
        for offset in offsets {
            stats.corruptRecords += 1
            logger.error("pin record at offset \(offset) of \(file.path) fails authentication; not applied")
        }
    }

    /// Step 6: truncates a torn tail (records that were being written when the process or
    /// machine stopped) and syncs the cut.
    mutating func cutTornTail(_ file: SegmentFile, at start: Int, of size: Int) throws(CaskError) {
        stats.tornTailBytes += size - start
        guard !readOnly else {
            // A reader ignores the tail (a live writer may be appending to it right now).
            logger.debug("ignoring \(size - start) bytes after offset \(start) of \(file.path) (read-only)")
            return
        }
        let handle = try fs.open(file.path, mode: .appendOrCreate)
        defer { fs.close(handle) }
        try fs.truncate(handle, to: Int64(start))
        try fs.sync(handle)
        logger.notice("cut a torn tail of \(size - start) bytes from \(file.path)")
    }

    /// Step 7: counts and logs damaged ranges, and raises the salvage bound to the first
    /// sequence number each range might have held.
    mutating func noteDamage(_ damage: [SegmentScanner.Damage], in segment: Loaded, nextLogMinimum: UInt64?, raisesBound: Bool = true) {
        for range in damage {
            stats.damagedRanges += 1
            stats.corruptRecords += 1
            logger.error("damaged bytes \(range.start)..<\(range.end) in \(segment.file.path): \(range.reason)")
            guard raisesBound else { continue }
            let bound: UInt64
            if let next = range.nextSequence {
                bound = next
            } else if let h = segment.header, h.kind == .compacted, h.sequenceLimit > 0 {
                bound = h.sequenceLimit
            } else if let next = nextLogMinimum {
                bound = next
            } else {
                bound = .max
            }
            salvageBound = max(salvageBound, bound)
        }
    }

    /// Keeps the record with the higher sequence number, whatever file it came from.
    @inline(__always)
    static func apply(_ entry: IndexEntry, key: UnsafeRawBufferPointer, to index: inout KeyIndex) {
        // One hash in the common case (a key not seen yet, or a newer record of it).
        if let previous = index.updateValue(entry, forKey: key), previous.sequence >= entry.sequence {
            index.updateValue(previous, forKey: key)
        }
    }
}
