import CCaskSupport
import Logging
import CaskFormat

/// The last step of an open: the store's starting state from what recovery kept (a writer's,
/// with an active segment, or a reader's), and the accounting it starts with.
extension StoreLoader {
    /// What a store whose records reach ``Format/maximumSequence`` gets told (format-spec.md,
    /// "Sequence numbers"): no repair renumbers a store, and a copy keeps the record.
    static let noSequenceLeft = "no sequence numbers are left for new writes, and no repair renumbers a store; reads still work (`cask get`, `cask ls`): remove the store's folder to start empty (a cache refills)"

    /// After recovery: a new active segment after every sequence number seen, and the state holding the
    /// kept segments, the index and each segment's live bytes.
    func startState(with kept: [Loaded], listing: StoreDirectory) throws(CaskError) -> StoreState {
        // Every sequence kept is at most Format.maximumSequence (a higher one is damage); one
        // at the very top leaves none for new writes: refuse writing instead of wrapping around.
        guard maximumSequence < Format.maximumSequence else {
            throw .corruption(file: directory, offset: 0, reason: "a record claims sequence number \(maximumSequence), the last a writer may issue; \(Self.noSequenceLeft)")
        }
        let continued = try continueNewest(of: kept, listing: listing)
        let writer: SegmentWriter
        if let continued {
            writer = continued
        } else {
            let maxID = listing.segmentIDs.last ?? 0
            let header = SegmentHeader(
                id: UInt64(maxID &+ 1), kind: .log, flags: 0, minimumSequence: maximumSequence + 1, sequenceLimit: 0,
                keyID: options.writtenKeyID)
            writer = try SegmentWriter.start(header, in: directory, options: options)
        }
        var state = StoreState(directory: directory, options: options, writer: writer, nextSequence: maximumSequence + 1)
        for segment in kept where segment.file.id != continued?.id {
            // A damaged header gives no lower bound: 0 keeps every tombstone that might matter.
            state.addSegment(segment.file, size: segment.size, minimumSequence: segment.header?.minimumSequence ?? 0,
                             isCompacted: segment.header?.kind == .compacted, keyID: segment.header?.keyID ?? 0)
            if segment.header == nil { state.segmentSet.noteRecovered(segment.file.id, headerDamaged: true) }   // compaction rewrites it first
        }
        try noteHintFiles(listing, in: &state)
        if let continued, let newest = kept.last {
            state.segmentSet.noteRecovered(continued.id, minimumSequence: newest.header?.minimumSequence ?? 0)
        }
        Self.adopt(index, in: &state)
        trimIndex(&state)
        state.stats = stats
        return state
    }

    /// Open continues the newest segment when it was closed cleanly (loaded from a valid hint, so
    /// it holds no torn tail and its hint lists every record), is a log segment of this format
    /// version and has room: an app that opens, writes a little and closes again (a command-line
    /// tool, an extension) then grows one segment instead of a segment and a hint per launch
    /// (format-spec.md, "Writing protocol", "Open"). Its hint file is deleted, durably, before
    /// anything is appended (it would no longer describe the segment); the writer starts with
    /// the hint's entries, so the hint written at seal or close is complete again.
    private func continueNewest(of kept: [Loaded], listing: StoreDirectory) throws(CaskError) -> SegmentWriter? {
        guard let newest = kept.last, newest.file.id == listing.segmentIDs.last,
              let header = newest.header, header.kind == .log,
              header.keyID == options.writtenKeyID, newest.version == header.version,
              restoredFromSnapshot || loadedFromHints.contains(newest.file.id), newest.size < Int64(options.segmentSize),
              let hints = restoredFromSnapshot ? .continuingUnknownRecords() : try readHintBuilder(of: newest) else { return nil }
        let path = newest.file.path
        let handle = try fs.open(path, mode: .appendOrCreate)
        let file = SegmentFile(id: newest.file.id, path: path, handle: handle, fileSystem: fs, mapLength: options.segmentSize)
        try fs.remove(FileNames.join(directory, FileNames.hint(newest.file.id)))
        try fs.syncDirectory(directory)
        return SegmentWriter(file: file, size: newest.size, bufferCapacity: options.writeBufferSize, hints: hints)
    }

    /// The hint entries of a segment, as a builder for the writer that continues it; nil when
    /// the hint is gone or invalid (the segment is then sealed, not continued). A failed read throws.
    private func readHintBuilder(of segment: Loaded) throws(CaskError) -> HintBuilder? {
        let path = FileNames.join(directory, FileNames.hint(segment.file.id))
        guard let handle = try fs.openIfPresent(path) else { return nil }
        defer { fs.close(handle) }
        var bytes = try fs.readWholeFile(handle)
        guard HintSeal.open(&bytes, keyring: options.keyring) == nil else { return nil }
        return HintBuilder(hintFile: bytes, segmentID: segment.file.id, segmentSize: segment.size)
    }

    /// Trims the index's arrays to their counts; when that freed memory (an open from hint files
    /// sizes the index for every hinted record, overwritten ones included), gives the heap's free
    /// pages back to the system.
    private func trimIndex(_ state: inout StoreState) {
        if state.keys.trimExcessCapacity() > 1 << 20 { cask_release_free_heap() }
    }

    /// Records the sizes of the hint files of `state`'s segments (file bytes, backups, listings).
    /// A hint file that cannot be opened or measured throws: the byte limit counts it.
    private func noteHintFiles(_ listing: StoreDirectory, in state: inout StoreState) throws(CaskError) {
        for id in listing.hintIDs where state.segments[id] != nil {
            guard let h = try fs.openIfPresent(listing.hintPath(id)) else { continue }
            defer { fs.close(h) }
            state.segmentSet.noteHint(of: id, bytes: try fs.size(h))
        }
    }

    /// Read-only: the state over the kept segments, whose writer stands for the newest one (it
    /// is never written: the store refuses writes).
    func startReadOnlyState(with kept: [Loaded], opened: [Loaded], listing: StoreDirectory) throws(CaskError) -> StoreState {
        guard let newest = kept.last ?? opened.last else { throw .notACaskStore(file: directory) }
        let writer = SegmentWriter(file: newest.file, size: newest.size, bufferCapacity: 16)
        var state = StoreState(directory: directory, options: options, writer: writer, nextSequence: maximumSequence + 1)
        for segment in kept {
            state.addSegment(segment.file, size: segment.size, minimumSequence: segment.header?.minimumSequence ?? 0,
                             isCompacted: segment.header?.kind == .compacted, keyID: segment.header?.keyID ?? 0)
        }
        try noteHintFiles(listing, in: &state)
        Self.adopt(index, in: &state)
        trimIndex(&state)
        state.stats = stats
        return state
    }

    /// Makes `index` the state's key directory, with per-segment live bytes and counts summed
    /// in arrays indexed by segment id (from the lowest), or by a slot per segment when the ids
    /// span more than 65,536.
    static func adopt(_ index: KeyIndex, in state: inout StoreState) {
        // Summed per segment in an array indexed by segment id (entries of a churned store
        // alternate between segments: a dictionary update per entry was a tenth of the open).
        let ids = Array(state.usage.keys)
        guard let low = ids.min(), let high = ids.max() else { return state.keys.adopt(index) { _ in } }
        let dense = high - low < 1 << 16
        let slots = dense ? [:] : Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
        let slot = { (id: UInt32) -> Int? in dense ? (id >= low && id <= high ? Int(id - low) : nil) : slots[id] }
        var bytes = [Int64](repeating: 0, count: dense ? Int(high - low) + 1 : ids.count)
        var counts = [Int](repeating: 0, count: bytes.count)
        state.keys.adopt(index) { entry in
            if let n = slot(entry.segment) { bytes[n] += Int64(entry.recordSize); counts[n] += 1 }
        }
        for id in ids {
            guard let n = slot(id) else { continue }
            state.segmentSet.addLive(bytes[n], entries: counts[n], in: id)
        }
    }

    /// Step 7: tombstones for the keys the salvage rule dropped, synced, so that an older record
    /// of theirs can never come back.
    func tombstone(_ dropped: [String], in state: inout StoreState) throws(CaskError) {
        guard !dropped.isEmpty else { return }
        let now = options.clock.now
        for key in dropped {
            try withKeyBytes(key) { keyBytes throws(CaskError) in
                _ = try state.write(.tombstone(keyBytes, hiding: 0), now: now, durable: false)
            }
        }
        try state.syncActive()
    }
}
