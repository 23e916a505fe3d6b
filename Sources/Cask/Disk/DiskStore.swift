import Foundation
import Synchronization
import CaskFormat

/// A persistent key-value store of byte values: a Bitcask-style log of checksummed records in
/// segment files, with an in-memory index loaded on open (from the snapshot a clean close
/// writes, else rebuilt from hint files and segments).
///
/// ```swift
/// let store = try DiskStore(directory: "/tmp/cache")
/// try store.setValue(Data("hello".utf8), forKey: "greeting", timeToLive: .seconds(60))
/// let value = try store.value(forKey: "greeting")   // Data("hello")
/// try store.close()
/// ```
///
/// Thread safety: every method may be called from any thread. Writers are serialised by one
/// mutex; readers hold it only to look up the index and then read the file with `pread`.
///
/// Durability: see ``Durability``. A store directory is open in one place at a time; a second
/// open, from this or another process, throws ``CaskError/storeLocked(path:ownerPID:)``.
public final class DiskStore: Sendable {
    /// The store's directory.
    public let directory: String
    /// The options the store was opened with.
    public let options: StoreOptions
    let state: StoreStateLock
    /// The directory lock (nil when read-only: readers take no lock).
    let lock: StoreLock?
    /// The flush deadline (nil when read-only).
    let ticker: BackgroundThread?
    /// Writes the full write buffers that puts hand off, outside the lock (SegmentWriter+Handoff.swift);
    /// runs only when woken.
    let bufferWriter: BackgroundThread?
    /// Interval syncs, at most one per interval (nil unless the durability is `.interval`).
    let syncer: BackgroundThread?
    /// Writes the hint files of sealed segments off the write path, one at a time.
    let hintQueue = DispatchQueue(label: "cask.hints")
    /// Held for the whole of a compaction pass: one pass at a time.
    let compactionLock = Locked<Bool>(false)
    /// Chooses the group commit's syncing writer (and is taken by `close`/`removeAll`, which
    /// must not close a file under it). Taken before `state`, never inside it.
    let commitGate = CommitGate()
    let compacting = Atomic<Bool>(false)
    /// Raised by `close`: a running compaction pass stops at its next step instead of finishing.
    let closing = CancellationFlag()
    /// Who is told how long syncs, compaction passes and (through a cache above) loads take.
    let timings: TimingObservers
    /// When a durable writer last found another one syncing (uptime nanoseconds).
    let lastConcurrentDurableWrite = Atomic<UInt64>(0)
    let compactor: BackgroundThread?
    /// The active segment as the compaction thread last saw it (``sealIdleActiveSegment()``).
    let lastActiveCheck = Locked<ActiveSegmentMark?>(nil)

    /// Opens the store in `directory`, creating the directory when missing, and rebuilds the
    /// index (from hint files where valid, by scanning otherwise).
    ///
    /// - Throws: ``CaskError/storeLocked(path:ownerPID:)`` when it is open elsewhere;
    ///   ``CaskError/notACaskStore(file:)`` when the directory holds other files;
    ///   ``CaskError/unsupportedFormatVersion(file:found:supported:)`` for a newer format;
    ///   ``CaskError/io(operation:path:errno:)`` when the file system fails.
    ///   Damage inside the store is recovered from, not thrown (see format-spec.md, "Recovery").
    ///
    /// With ``StoreOptions/isReadOnly`` the directory must exist and hold a store
    /// (``CaskError/notACaskStore(file:)`` otherwise); nothing in it is changed, and no lock is
    /// taken, so it opens while another process writes to it.
    public init(directory: String, options: StoreOptions = StoreOptions()) throws(CaskError) {
        try options.validate()
        let timings = TimingObservers()
        var options = options
        options.fileSystem = StoreFileSystem(base: options.fileSystem, timings: timings, permissions: options.permissions)
        self.timings = timings
        self.directory = directory
        if options.isReadOnly {
            var loaded = try Self.loadReadOnly(directory: directory, options: options)
            let found = loaded.work.takeTagRemovalsFoundAtOpen()
            self.options = loaded.options   // with the store's binding (format-spec.md, "Store id")
            self.state = StoreStateLock(loaded)
            self.lock = nil
            self.ticker = nil
            self.bufferWriter = nil
            self.syncer = nil
            self.compactor = nil
            try applyTagRemovals(foundAtOpen: found)
            return
        }
        let fs = options.fileSystem
        try fs.createDirectory(directory)
        try StoreFiles.requireStoreDirectory(directory, fs: fs)
        try StorePermissionCheck.check(directory, options: options, writing: true)
        let lock = try StoreLock.acquire(directory: directory, fs: fs)
        options.bindStore(try StoreIdentity.resolve(directory, options: options))
        self.options = options
        self.lock = lock
        var loader = StoreLoader(directory: directory, options: options)
        // What the open found to do is taken before the state goes behind its lock.
        var loaded = try loader.load()
        let (hints, found) = (loaded.work.takeHints(), loaded.work.takeTagRemovalsFoundAtOpen())
        self.state = StoreStateLock(loaded)
        let box = WeakBox()
        (ticker, bufferWriter, syncer, compactor) = Self.backgroundThreads(options, box)
        box.store = self
        // A thread that asked `isArmed()` before `box.store` was set went to sleep without a
        // timer: wake each once, now that it can see the store (an idle store with items to
        // expire or segments to re-seal under a new key would otherwise never be looked at).
        schedule(.lookForCompaction)
        ExitFlush.register(self)
        if !hints.isEmpty { writeHints(hints) }   // of segments the open scanned
        try applyTagRemovals(foundAtOpen: found)
    }

    /// The store's background threads, each reaching the store through `box`. They sleep
    /// without a timer while there is nothing for them (an idle store causes no wake-ups): the
    /// flusher while nothing is unflushed; the syncer while nothing is unsynced; the compactor
    /// while no item can expire or age out, no sealed segment gained dead bytes and the active
    /// segment is not worth sealing (a sealed segment and byte pressure wake it at once). The
    /// flush deadline and the sync interval are apart: the syncer runs at least `d` after its
    /// previous run (BackgroundThread), so `.interval(d)` syncs at most once per `d` however
    /// often the flusher runs.
    private static func backgroundThreads(_ options: StoreOptions, _ box: WeakBox)
        -> (flush: BackgroundThread, write: BackgroundThread, sync: BackgroundThread?, compaction: BackgroundThread?) {
        let flush = BackgroundThread(name: "cask.flush", interval: options.flushInterval,
                                     isArmed: { box.store?.hasUnflushedRecords ?? false }) { box.store?.backgroundTick() ?? false }
        let write = BackgroundThread(name: "cask.write", interval: options.flushInterval,
                                     isArmed: { false }) { box.store?.writeHandedOffBuffer() ?? false }
        var sync: BackgroundThread?
        if case .interval(let d) = options.durability {
            sync = BackgroundThread(name: "cask.sync", interval: d,
                                    isArmed: { box.store?.hasUnsyncedRecords ?? false }) { box.store?.backgroundSync() ?? false }
        }
        let compaction = options.compaction.isAutomatic
            ? BackgroundThread(name: "cask.compaction", interval: options.compaction.checkInterval, niceness: 10,
                               isArmed: { box.store?.needsCompactionCheck ?? false }) { box.store?.backgroundCompaction() ?? false }
            : nil
        return (flush, write, sync, compaction)
    }

    deinit {
        ExitFlush.closing(self) {
            ticker?.stop()
            bufferWriter?.stop()
            syncer?.stop()
            compactor?.stop()
            try? close()   // harmless: a deinit cannot report; close() flushes and syncs what it can, and open recovers the rest
        }
    }

    // MARK: Writing

    /// Stores `value` under `key`, replacing any earlier value.
    ///
    /// - Parameters:
    ///   - value: the bytes to store, 0 to `maximumValueSize` (compressed per the store's
    ///     ``CompressionPolicy``).
    ///   - key: 1 to 1,024 bytes of UTF-8, compared byte for byte: two `String`s Swift calls
    ///     equal but spelled in different Unicode normal forms (`"caf\u{E9}"` and
    ///     `"cafe\u{301}"`) are two keys in every layer. Normalise keys first if they come from
    ///     user input.
    ///   - timeToLive: the item expires this long after now (never returned afterwards), at
    ///     least 1 ms; nil = never.
    ///   - isPinned: pinned items are exempt from TTL and age limits (while pinned: unpinning
    ///     makes the TTL count again) and evicted last.
    /// - Throws: ``CaskError/emptyKey``, ``CaskError/keyTooLong(length:maximum:)`` (over 1,024
    ///   UTF-8 bytes), ``CaskError/valueTooLarge(size:maximum:)`` (over `maximumValueSize`),
    ///   ``CaskError/invalidOption(_:)`` (a time to live under 1 ms, which no read could ever
    ///   see), ``CaskError/exceedsByteLimit(key:size:budget:)`` (its record alone would take more
    ///   than ``StoreOptions/itemByteBudget``: nothing is evicted for it),
    ///   ``CaskError/io(operation:path:errno:)``, ``CaskError/closed``. On a throw the key keeps
    ///   its previous value.
    public func setValue(
        _ value: some ContiguousBytes,
        forKey key: String,
        timeToLive: Duration? = nil,
        isPinned: Bool = false
    ) throws(CaskError) {
        let result: Result<Void, CaskError> = value.withUnsafeBytes { raw in
            Result { () throws(CaskError) in _ = try put(raw, forKey: key, timeToLive: timeToLive, isPinned: isPinned) }
        }
        try result.get()
    }

    /// The expiry (milliseconds since 1970; 0 = none) of an item put at `now` with
    /// `timeToLive`. An expiry past the index's range (year 10889) is the same as none in
    /// practice; it is clamped, never wrapped.
    static func expiry(now: Int64, timeToLive: Duration?) -> Int64 {
        timeToLive.map { ttl -> Int64 in
            let (sum, overflow) = now.addingReportingOverflow(max(0, ttl.milliseconds))
            return overflow ? IndexEntry.maximumTime : min(max(1, sum), IndexEntry.maximumTime)
        } ?? 0
    }

    /// Starts recording which keys' live records go, for a layer above that keeps copies of
    /// records (the cache facade); returns the journal it reads. Costs a string per change
    /// from then on; a store nobody asked this of records nothing.
    func trackChanges() -> RecordChanges {
        state.withLock { $0.keys.changeJournal() }
    }

    /// Counts reads a layer above answered from its own copies as uses of the records here:
    /// each item's access time becomes the latest of its own and the reported one
    /// (milliseconds of the store's clock). A key that holds no live record, or a newer one
    /// written after the use, keeps its own. One hold of the lock per 1,024 uses.
    func recordUses(_ uses: [(String, Int64)]) {
        var next = 0
        while next < uses.count {
            let end = min(uses.count, next + 1024)
            state.withLock { s in
                for (key, time) in uses[next..<end] {
                    withUTF8(key) { bytes in
                        s.keys.noteUse(ofKey: bytes, at: time)
                    }
                }
            }
            next = end
        }
    }

    /// Does what a write left for after the lock: hint files, events, compaction (inline when
    /// disk use is past the byte limit's headroom: that is the writers' back-pressure).
    func finish(_ d: StoreState.Deferred) {
        schedule(d.jobs.union(.lookForCompaction))
        if !d.hints.isEmpty { writeHints(d.hints) }
        if let handler = options.eventHandler { for e in d.events { handler(e) } }
        if d.delayNanoseconds > 0 { usleep(max(1, d.delayNanoseconds / 1000)) }
        if d.jobs.contains(.compactOnWritePath) {
            do throws(CaskError) { try relieveByteLimitPressure() } catch {
                options.logger.warning("compaction under byte pressure failed: \(error)")
            }
        }
    }

    /// Removes the value for `key`. Returns true when there was one. The removal is recorded as a
    /// tombstone, so the key stays removed after reopen, compaction and (once synced) a crash;
    /// also when there was no value, since a record of the key that a limit evicted may still be
    /// on disk (format-spec.md, "Eviction without a tombstone").
    ///
    /// - Throws: ``CaskError/io(operation:path:errno:)`` or ``CaskError/closed``; the key then
    ///   keeps its value.
    @discardableResult
    public func removeValue(forKey key: String) throws(CaskError) -> Bool {
        try requireWritable()
        let now = options.clock.now
        return try writing(key) { keyBytes, s, durable throws(CaskError) -> (Bool, ticket: UInt64?) in
            // The newest value may itself still wait for its sync.
            let waiting = s.commits.newestWrite(ofKey: keyBytes)
            let existing = waiting.map { $0.entry.isTombstone ? nil : $0.entry } ?? s.index.entry(forKey: keyBytes)
            if existing == nil && waiting != nil { return (false, nil) }   // its last write is a removal
            // An absent key gets a tombstone too: a record of it evicted without one may
            // still be on disk (format-spec.md, "Eviction without a tombstone").
            let live = existing.map { StoreState.goneCause($0, now: now, ageLimit: s.ageLimitMilliseconds) == nil } ?? false
            let written = try s.write(.tombstone(keyBytes, hiding: StoreState.hiding(existing), removedKey: live ? key : nil),
                                      now: now, durable: durable)
            return (live, written.ticket)
        }
    }

    /// Removes every item. The store is empty when this returns: a new segment marked as clearing
    /// all older ones is made durable first, then the old files are deleted.
    public func removeAll() throws(CaskError) {
        try requireWritable()
        try commitGate.withLeadership { () throws(CaskError) in try state.withLock { s throws(CaskError) in
            guard !s.isClosed else { throw .closed }
            let old = Array(s.segments.keys)
            try s.clear()
            s.settleAwaitingAsCleared()
            // Harmless `try?`s: the clearing segment is durable, so these files are dead whatever
            // happens to them; the next open removes any that remain (recovery step 2).
            for id in old {
                try? s.fs.remove(FileNames.join(s.directory, FileNames.segment(id)))
                try? s.fs.remove(FileNames.join(s.directory, FileNames.hint(id)))
            }
            try? s.fs.syncDirectory(s.directory)
        } }
    }

    // MARK: Durability and lifetime

    /// Writes buffered records and `fdatasync`s the active segment: everything put or removed
    /// before this call survives a power loss once it returns. The `fdatasync` runs without the
    /// store's lock: reads and writes go on meanwhile.
    public func sync() throws(CaskError) {
        if options.isReadOnly { return }
        try state.syncActiveOutsideLock()
    }

    /// Throws ``CaskError/readOnly(path:)`` for a store opened with ``StoreOptions/isReadOnly``.
    func requireWritable() throws(CaskError) {
        if options.isReadOnly { throw .readOnly(path: directory) }
    }

    /// Syncs, writes the active segment's hint file (so the next open reads no segment), and
    /// releases the directory lock. Further calls throw ``CaskError/closed``; closing twice is allowed.
    public func close() throws(CaskError) {
        if options.isReadOnly { return try closeState() }
        try ExitFlush.closing(self) { () throws(CaskError) in try closeWritable() }
    }

    /// ``close()`` of a store open for writing: stops the background work, syncs, writes the
    /// snapshot (or the active hint) and releases the lock.
    private func closeWritable() throws(CaskError) {
        ticker?.stop()
        bufferWriter?.stop()
        syncer?.stop()
        compactor?.stop()
        closing.cancel()   // a running pass stops at its next step (before its output is renamed in)
        compactionLock.withLock { _ in }
        // Hints of segments sealed in the background since the last write: written now (their
        // entries are in memory), or the next open would have to scan those segments for them.
        writePendingHints()
        hintQueue.sync {}
        try closeState()
        lock?.release()
    }

    /// Closes the state, as the group commit's leader (no commit runs meanwhile): a writable
    /// store syncs, puts the waiting writes in effect, removes an unused prepared segment and
    /// writes its index snapshot (or the active segment's hint); then everything is forgotten.
    private func closeState() throws(CaskError) {
        let writable = !options.isReadOnly
        try commitGate.withLeadership { () throws(CaskError) in try state.withLock { s throws(CaskError) in
            guard !s.isClosed else { return }
            if writable { try s.finishWriting() }
            s.tail.close()
            s.keys.removeAll()
            s.segmentSet.apply(.close)
        } }
    }

    /// At a normal process exit (``ExitFlush``): hands buffered records to the OS and, unless the
    /// mode is `.none`, syncs them, so that every acknowledged write outlives the process.
    func flushForExit() {
        state.withLock { s in
            guard !s.isClosed else { return }
            do throws(CaskError) {
                if options.durability == .none { try s.flush() } else { try s.syncActive() }
            } catch {
                options.logger.error("could not keep buffered writes of \(directory) at exit: \(error)")
            }
        }
    }

    /// Waits until background hint writes queued so far are done (for tests and tools that need
    /// a quiet file system).
    package func waitForBackgroundWork() { hintQueue.sync {} }

}

/// Lets the background thread reach the store without keeping it alive.
private final class WeakBox: @unchecked Sendable {
    // Written once in DiskStore.init before the first tick can read it; weak loads are atomic.
    weak var store: DiskStore?
}
