import CCaskSupport
import Logging
import CaskFormat

/// Rebuilds a store's state on open: reads hint files where they are valid, scans segments where
/// they are not, cuts a torn tail, applies the salvage rule to damage, and starts a new active
/// segment. The rules are in format-spec.md, "Recovery"; this type applies them in that order.
///
/// Read-only (``StoreOptions/isReadOnly``): the same rules, applied in memory only. Nothing is
/// deleted, truncated or written; the newest segment is read where it ends (ignoring a torn
/// tail), and the state's writer only stands for it (the store refuses every write).
struct StoreLoader {
    let directory: String
    let options: StoreOptions
    var readOnly: Bool { options.isReadOnly }
    var fs: any CaskFileSystem { options.fileSystem }
    var logger: Logger { options.logger }

    struct Loaded {
        var file: SegmentFile
        var header: SegmentHeader?
        var size: Int64
        /// The format version in the header (0 when the header is damaged).
        var version: UInt32 = 0
    }

    /// A pin record found while loading; applied once the index is built (recovery step 4).
    struct FoundPin {
        var key: [UInt8]
        var pinned: Bool
        var location: PinRecordLocation
    }

    /// What scanning found that the salvage rule needs.
    var salvageBound: UInt64 = 0
    var index = KeyIndex()
    var stats = StoreStatistics()
    var maximumSequence: UInt64 = 0
    var hintsToWrite: [UInt32] = []
    /// Segments loaded from a valid hint file (closed cleanly: no torn tail, hint complete).
    var loadedFromHints: Set<UInt32> = []
    /// The index came from the snapshot of the last clean close and every segment is complete
    /// and undamaged (the newest may be continued).
    var restoredFromSnapshot = false
    /// Records that an intact hint file lists but its damaged or cut segment no longer holds.
    var lostRecords: [LostRecord] = []

    /// A record known (from its segment's hint file) to have been lost.
    struct LostRecord {
        var key: [UInt8]
        var sequence: UInt64
        /// A removal record (its key is the prefix or tag): applied even when its bytes are lost.
        var isRemoval = false
        /// A tagged record: for a removal, its key is a tag.
        var isTagged = false
    }
    var pins: [FoundPin] = []
    /// Removal records found (applied once every segment is loaded, step 4).
    var removals = RemovalRecords()

    init(directory: String, options: StoreOptions) {
        self.directory = directory
        self.options = options
    }

    /// The directory as listed, with every segment in it open (a reader's view is fixed from
    /// here on: a segment deleted later stays readable through its descriptor).
    struct Snapshot {
        let listing: StoreDirectory
        let opened: [Loaded]
    }

    /// Lists the directory and opens every segment in it.
    func snapshot() throws(CaskError) -> Snapshot {
        let listing = try StoreDirectory(directory, fs: fs)
        return Snapshot(listing: listing, opened: try openSegments(listing))
    }

    /// Loads the store in `directory` (which must exist and be locked by the caller), applying
    /// the recovery steps of format-spec.md, "Recovery", in order.
    mutating func load() throws(CaskError) -> StoreState {
        try load(snapshot())
    }

    /// Loads the store from `snapshot` (a reader checks it against concurrent deletions first).
    mutating func load(_ snapshot: Snapshot) throws(CaskError) -> StoreState {
        let (listing, opened) = (snapshot.listing, snapshot.opened)
        let restored = listing.names.contains(IndexSnapshot.fileName)
            ? try IndexSnapshot.load(from: directory, segments: opened.map { ($0.file, $0.size) }, fs: fs, keyring: options.keyring) : nil
        // Before anything is removed: a refused open changes nothing.
        try EncryptionCheck.check(Self.notCleared(opened), keyring: options.keyring)
        try removeLeftovers(listing)
        if let restored { return try start(from: restored, listing: listing, opened: opened) }
        index = KeyIndex(capacity: try expectedEntries(listing))
        let current = try removeClearedSegments(opened)
        let kept = try loadRecords(current, hinted: listing.hintIDs)
        applyRemovals()
        let dropped = applySalvageRule()
        let livePins = applyPinRecords()
        var state = try readOnly ? startReadOnlyState(with: kept, opened: current, listing: listing) : startState(with: kept, listing: listing)
        for (key, location) in livePins { key.withUnsafeBytes { state.setLivePinRecord(location, forKey: $0) } }
        noteTagRemovals(in: &state)
        guard !readOnly else { return state }
        for id in hintsToWrite { state.writeHint(for: id) }
        try tombstone(dropped, in: &state)
        return state
    }

    /// The entries the hint files announce (their headers' counts): the index is sized once for
    /// them instead of growing (and briefly holding two tables) as it fills. Only a hint, read
    /// before any check: a count is believed only up to what the file's size can hold (an entry
    /// takes at least 6 bytes), so a damaged or hostile header cannot make the open reserve
    /// more memory than the hint file's own size would justify. A read that fails throws (the
    /// hint would fail again when it is loaded, and open must not go on around it).
    private func expectedEntries(_ listing: StoreDirectory) throws(CaskError) -> Int {
        var total = 0
        for id in listing.hintIDs {
            guard let handle = try fs.openIfPresent(listing.hintPath(id)) else { continue }
            defer { fs.close(handle) }
            let size = try fs.size(handle)
            let room = max(0, (Int(size) - Format.hintHeaderSize - Format.hintTrailerSize) / HintEntryCodec.minimumSize)
            var header = [UInt8](repeating: 0, count: Format.hintHeaderSize)
            let complete = try header.withMutableBytes { raw throws(CaskError) in try fs.readExactly(handle, into: raw, at: 0) }
            if complete { total += Int(min(header.withUnsafeBytes { $0.u64(32) }, UInt64(room))) }
        }
        return total
    }

    // MARK: Recovery steps

    /// The state from a valid index snapshot (recovery step 0): the segments are exactly the
    /// ones of the last clean close, so there is nothing to recover.
    private mutating func start(from restored: IndexSnapshot.Restored, listing: StoreDirectory, opened: [Loaded]) throws(CaskError) -> StoreState {
        index = restored.index
        maximumSequence = restored.maximumSequence
        stats.indexLoadedFromSnapshot = true
        // Damage found in a tail: the newest segment is not continued (sealed, its damage can
        // never be taken for a torn tail by a later scan).
        restoredFromSnapshot = restored.damagedKeys.isEmpty
        var state = try readOnly ? startReadOnlyState(with: opened, opened: opened, listing: listing) : startState(with: opened, listing: listing)
        for (key, location) in restored.pins { key.withUnsafeBytes { state.setLivePinRecord(location, forKey: $0) } }
        state.stats.corruptRecords += restored.damagedKeys.count
        if !restored.damagedKeys.isEmpty {
            let damaged = restored.damagedRecords
            let listed = damaged.prefix(5).map(\.description).joined(separator: ", ") + (damaged.count > 5 ? ", and \(damaged.count - 5) more" : "")
            logger.error("\(damaged.count) records failed their checksum in the last 4 KiB of a segment (which changed since the index snapshot), so their keys were dropped: \(listed); run `cask verify` to check the rest")
            if !readOnly { try tombstone(restored.damagedKeys, in: &state) }   // an older record must not come back
        }
        // A segment sealed without a hint (full at the last close): made in the background.
        for segment in opened where !readOnly && segment.file.id != state.writer.id && !listing.hintIDs.contains(segment.file.id) {
            state.work.queue(PendingHint(segment: segment.file.id, entries: nil, segmentSize: segment.size, scanned: segment.file))
        }
        return state
    }

    /// Step 1: unfinished temporary files, hint files whose segment is gone, and the index
    /// snapshot (read already, if valid; it must not outlive the first write).
    func removeLeftovers(_ listing: StoreDirectory) throws(CaskError) {
        guard !readOnly else { return }   // a reader ignores them: they are not segments
        if listing.names.contains(IndexSnapshot.fileName) { try fs.remove(FileNames.join(directory, IndexSnapshot.fileName)) }
        for name in listing.temporaryNames {
            try fs.remove(FileNames.join(directory, name))   // an unfinished hint or compaction output
        }
        for orphan in listing.orphanHintIDs {
            try fs.remove(listing.hintPath(orphan))   // its segment was compacted away
        }
    }

    /// Opens every segment and reads its header (nil when damaged).
    func openSegments(_ listing: StoreDirectory) throws(CaskError) -> [Loaded] {
        var loaded: [Loaded] = []
        for id in listing.segmentIDs {
            let path = listing.segmentPath(id)
            let handle = try fs.open(path, mode: .read)
            let size = try fs.size(handle)
            // A reader does not map the newest segment: a writing process may cut its torn tail
            // (or a failed write) while this one runs, and a mapped read past the new end would
            // kill it with SIGBUS; pread returns short instead (format-spec.md, "Readers").
            let mayShrink = readOnly && id == listing.segmentIDs.last
            let file = SegmentFile(id: id, path: path, handle: handle, fileSystem: fs, mapLength: mayShrink ? 0 : Int(size))
            var head = [UInt8](repeating: 0, count: min(Int(size), Format.segmentHeaderSize))
            _ = try head.withMutableBytes { raw throws(CaskError) in try fs.readExactly(handle, into: raw, at: 0) }
            var header: SegmentHeader?
            switch head.withUnsafeBytes({ SegmentHeader.parse($0) }) {
            case .valid(let h): header = h
            case .newerVersion(let v): throw .unsupportedFormatVersion(file: path, found: v, supported: Format.newestReadableVersion)
            case .damaged: header = nil
            }
            let version = header == nil ? 0 : head.withUnsafeBytes { $0.u32(8) }
            loaded.append(Loaded(file: file, header: header, size: size, version: version))
        }
        return loaded
    }

    /// The segments a segment that clears older ones (`removeAll`) leaves alive: it and those
    /// after it.
    static func notCleared(_ loaded: [Loaded]) -> [Loaded] {
        guard let epoch = loaded.last(where: { $0.header?.clearsOlder == true })?.file.id else { return loaded }
        return loaded.filter { $0.file.id >= epoch }
    }

    /// Step 2: a segment that clears older ones (`removeAll`) makes every lower id dead.
    func removeClearedSegments(_ loaded: [Loaded]) throws(CaskError) -> [Loaded] {
        guard let epoch = loaded.last(where: { $0.header?.clearsOlder == true })?.file.id else { return loaded }
        if readOnly { return loaded.filter { $0.file.id >= epoch } }
        for dead in loaded where dead.file.id < epoch {
            try fs.remove(dead.file.path)
            try fs.remove(FileNames.join(directory, FileNames.hint(dead.file.id)))
        }
        try fs.syncDirectory(directory)
        return loaded.filter { $0.file.id >= epoch }
    }

    /// Steps 2, 3, 5 and 6: each segment from its hint file when valid, scanned otherwise (cutting a
    /// torn tail and noting damage); empty and never-completed segments are removed.
    mutating func loadRecords(_ loaded: [Loaded], hinted: Set<UInt32>) throws(CaskError) -> [Loaded] {
        // A newest log segment holding only its header (prepared for a rollover, or one that
        // just happened) is removed below: the one before it is then the newest, whose torn
        // tail is cut (format-spec.md, "Rollover").
        let lastLogID = loaded.last(where: { StoreDirectory.isLog($0.header) && !Self.isEmptyLog($0) })?.file.id
        var kept: [Loaded] = []
        for (position, segment) in loaded.enumerated() {
            let id = segment.file.id
            if try removeIfEmpty(segment, isLastLog: id == lastLogID) { continue }
            if hinted.contains(id), let header = segment.header, try loadHint(segment.file, size: segment.size) {
                maximumSequence = max(maximumSequence, header.minimumSequence)
                stats.segmentsLoadedFromHints += 1
                loadedFromHints.insert(id)
                kept.append(segment)
                continue
            }
            let nextLogMinimum = loaded[(position + 1)...].first(where: { $0.header?.kind == .log })?.header?.minimumSequence
            let listed = hinted.contains(id) ? try hintedRecords(of: segment.file) : nil
            if let size = try scan(segment, isLast: id == lastLogID, nextLogMinimum: nextLogMinimum, listed: listed) {
                var updated = segment
                updated.size = size
                kept.append(updated)
            }
        }
        return kept
    }

    /// Removes a segment that holds no record: an empty log segment (a store opened and closed
    /// without writes; its header's sequence number is kept for monotonicity), or the newest one
    /// when its header never became durable (a crash inside rollover or open: records are only
    /// appended after the header is synced).
    mutating func removeIfEmpty(_ segment: Loaded, isLastLog: Bool) throws(CaskError) -> Bool {
        let headerOnly = segment.size <= Int64(Format.segmentHeaderSize)
        if Self.isEmptyLog(segment), let h = segment.header {
            maximumSequence = max(maximumSequence, h.minimumSequence > 0 ? h.minimumSequence - 1 : 0)
            if readOnly { return true }
            try fs.remove(FileNames.join(directory, FileNames.hint(segment.file.id)))
            try fs.remove(segment.file.path)
            return true
        }
        if isLastLog && segment.header == nil && headerOnly {
            if readOnly { return true }
            try fs.remove(segment.file.path)
            try fs.syncDirectory(directory)
            return true
        }
        return false
    }

    /// A log segment with a valid header and no record, that clears nothing.
    static func isEmptyLog(_ segment: Loaded) -> Bool {
        guard let h = segment.header else { return false }
        return h.kind == .log && !h.clearsOlder && segment.size == Int64(Format.segmentHeaderSize)
    }

    /// Step 4, first: the removal records drop every entry they remove (an older record of a key
    /// with their prefix). No tombstone is needed: each record stays until compaction finds
    /// that nothing it removes can remain.
    mutating func applyRemovals() {
        guard !removals.isEmpty else { return }
        var removed: [[UInt8]] = []
        index.forEach { key, e in
            if !e.isTombstone && removals.removes(key: key, sequence: e.sequence) { removed.append(Array(key)) }
        }
        for key in removed { key.withUnsafeBytes { _ = index.removeValue(forKey: $0) } }
        stats.keysRemovedByPrefixAtOpen = removed.count
    }

    /// Step 4, last: the tag removals found are applied once the store is open (a tagged
    /// entry's tags are in its record: ``DiskStore/removeTaggedEntries(_:now:)``); until then
    /// they are noted as walking, so that compaction keeps their records and no index
    /// snapshot is written.
    func noteTagRemovals(in state: inout StoreState) {
        state.work.adoptTagRemovalsFoundAtOpen(removals.tags)
    }

    /// Steps 4 and 7, the salvage rule: a damaged range might have held a newer record (or a delete) of
    /// any key whose surviving record is older than the range. Those keys are dropped (durably,
    /// by ``tombstone(_:in:)``); tombstones leave the index. Returns the dropped keys.
    mutating func applySalvageRule() -> [String] {
        var dropped: [String] = []
        // A lost record newer than the key's surviving one: the key must not go back to that.
        for lost in lostRecords {
            let older = lost.key.withUnsafeBytes { key in index.entry(forKey: key).map { $0.sequence < lost.sequence } } ?? false
            guard older, let entry = lost.key.withUnsafeBytes({ index.removeValue(forKey: $0) }) else { continue }
            if !entry.isTombstone { dropped.append(String(decoding: lost.key, as: UTF8.self)) }
        }
        lostRecords = []
        var tombstones: [String] = []
        for entry in index.entries where entry.isTombstone || entry.sequence < salvageBound {
            if entry.isTombstone { tombstones.append(index.key(of: entry)) } else { dropped.append(index.key(of: entry)) }
        }
        for key in tombstones + dropped { index.removeValue(forKey: key) }
        stats.keysDroppedByRecovery = dropped.count
        if !dropped.isEmpty {
            logger.error("recovery dropped \(dropped.count) keys that a damaged range might have overwritten or deleted")
        }
        return dropped
    }

    /// Step 4, pin records in sequence order: each sets or clears the pinned flag of the value
    /// record it names, when that record is still the key's entry; the latest such is the key's
    /// live pin record. Others are dead (their value was replaced or removed).
    mutating func applyPinRecords() -> [[UInt8]: PinRecordLocation] {
        pins.sort { $0.location.sequence < $1.location.sequence }
        var livePins: [[UInt8]: PinRecordLocation] = [:]
        for pin in pins {
            let applied = pin.key.withUnsafeBytes { key in
                index.withEntry(forKey: key) { e -> Bool in
                    guard !e.isTombstone, e.sequence == pin.location.target else { return false }
                    if pin.pinned { e.flags |= Format.RecordFlag.pinned } else { e.flags &= ~Format.RecordFlag.pinned }
                    return true
                } ?? false
            }
            if applied { livePins[pin.key] = pin.location }
        }
        pins = []
        return livePins
    }
}
