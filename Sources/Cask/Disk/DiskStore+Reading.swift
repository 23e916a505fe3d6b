import CCaskSupport
import Foundation
import CaskFormat

extension DiskStore {
    enum ReadPlan {
        /// Absent or gone; what an eviction found on the way left to do.
        case miss(StoreState.Deferred)
        /// A record still in the write buffer, copied out under the lock, with the keys and
        /// binding that open it (the state's: a reader's refresh may have found the store
        /// upgraded, format-spec.md, "Store id").
        case buffered([UInt8], IndexEntry, Keyring?)
        /// A record to read from `file`, with the keys that open it (as for `buffered`).
        case read(SegmentFile, IndexEntry, Keyring?)
        case damaged(IndexEntry)
    }

    /// The value stored under `key`, or nil when there is none, it has expired, it is a cache
    /// entry past its fresh period (``CaskCache/loadedValue(forKey:as:options:loader:)`` serves
    /// those while their stale window lasts), or its record failed its checksum (the damage is then logged, counted in ``statistics`` and the key
    /// removed: a damaged value is never returned). Counts as an access for LRU and age limits.
    ///
    /// The index lookup holds the store's lock; the file read (`pread`) does not.
    /// - Throws: ``CaskError/io(operation:path:errno:)`` when the read fails, ``CaskError/closed``;
    ///   ``CaskError/emptyKey`` or ``CaskError/keyTooLong(length:maximum:)`` for a key no write
    ///   accepts (a caller's bug, not a miss).
    public func value(forKey key: String) throws(CaskError) -> Data? {
        try withValue(forKey: key) { Data($0) }
    }

    /// Calls `body` with the value stored under `key` and returns its result, or returns nil when
    /// there is no value (as ``value(forKey:)``: absent, expired or damaged). Nothing is copied
    /// when the record is stored uncompressed in a mapped segment: `body` reads the page cache
    /// directly, so the bytes are valid only inside `body`. Do not call the store from `body`
    /// on the same key expecting to see a write made there. Thread-safe; `body` runs without the
    /// store's lock.
    /// - Throws: ``CaskError/io(operation:path:errno:)`` when the read fails, ``CaskError/closed``.
    public func withValue<R>(forKey key: String, _ body: (UnsafeRawBufferPointer) -> R) throws(CaskError) -> R? {
        let now = options.clock.now
        let result = try withRecord(forKey: key, usedAt: now) { bytes, _, header -> R? in
            let freshUntil = header?.freshUntil ?? 0
            return freshUntil != 0 && now >= freshUntil ? nil : body(bytes)
        }
        return result ?? nil
    }

    /// Marks `key` as read at `now` (milliseconds of the store's clock: LRU order and age)
    /// without reading its value. Returns the sequence number of its record, or nil when it
    /// holds no live value (absent, expired or past the age limit: such an item is evicted now,
    /// as a read would). For the cache facade, whose memory hits are reads of the disk
    /// layer's items too.
    @usableFromInline
    func touch(_ key: String, now: Int64) throws(CaskError) -> UInt64? {
        let (sequence, deferred) = try withUTF8(key) { keyBytes throws(CaskError) in
            try state.withLock { s throws(CaskError) -> (UInt64?, StoreState.Deferred) in
                guard !s.isClosed else { throw .closed }
                let sequence = s.use(keyBytes, now: now)?.sequence
                return (sequence, sequence == nil ? s.takeDeferred() : StoreState.Deferred())
            }
        }
        if !deferred.isEmpty { finish(deferred) }
        return sequence
    }

    /// ``withValue(forKey:_:)`` that also hands `body` the record's index entry (its sequence
    /// number and expiry, for the cache facade's memory copy) and, for a cache entry, the end of
    /// its fresh period (ms since 1970; 0 for a plain value). A stale entry is handed over too.
    func withRecord<R>(forKey key: String, _ body: (UnsafeRawBufferPointer, IndexEntry, Int64) -> R) throws(CaskError) -> R? {
        try withRecord(forKey: key, usedAt: options.clock.now) { body($0, $1, $2?.freshUntil ?? 0) }
    }

    /// ``withRecord(forKey:_:)`` as a use at `usedAt` (milliseconds of the store's clock): the
    /// read counts as an access (LRU order, age limit, hit statistics) and finds expired items
    /// gone, as a read by the app does. With nil the live record is read and checked as it
    /// stands, and nothing but damage changes. `body` gets a cache entry's header (nil for a
    /// plain value) and the value without it.
    func withRecord<R>(forKey key: String, usedAt now: Int64?, _ body: (UnsafeRawBufferPointer, IndexEntry, EntryHeader?) -> R) throws(CaskError) -> R? {
        let plan = try withUTF8(key) { keyBytes throws(CaskError) in
            try checkKeyLength(keyBytes)
            return try state.withLock { s throws(CaskError) -> ReadPlan in
                guard !s.isClosed else { throw .closed }
                return try Self.readPlan(keyBytes, in: &s, usedAt: now)
            }
        }
        return try read(plan, forKey: key, body)
    }

    /// Under the store's lock: where the live record of `keyBytes` is to be read (a use at
    /// `now`, counted as a hit or miss; with nil, nothing changes).
    static func readPlan(_ keyBytes: UnsafeRawBufferPointer, in s: inout StoreState, usedAt now: Int64?) throws(CaskError) -> ReadPlan {
        let found: IndexEntry?
        if let now { found = s.use(keyBytes, now: now) } else { found = s.index.entry(forKey: keyBytes) }
        guard let entry = found else {
            if now != nil { s.stats.misses += 1 }
            return .miss(s.takeDeferred())
        }
        if now != nil { s.stats.hits += 1 }
        if entry.segment == s.writer.id,
           let copy = try s.writer.bufferedBytes(at: Int64(entry.offset), count: entry.recordSize) {
            return .buffered(copy, entry, s.options.keyring)
        }
        guard let file = s.segments[entry.segment] else { return .damaged(entry) }
        return .read(file, entry, s.options.keyring)
    }

    /// Carries out `plan`: the record's bytes checked and handed to `body`, or nil (a miss, or
    /// damage, which is reported and removes the key).
    func read<R>(_ plan: ReadPlan, forKey key: String, _ body: (UnsafeRawBufferPointer, IndexEntry, EntryHeader?) -> R) throws(CaskError) -> R? {
        switch plan {
        case .miss(let deferred):
            // An item found expired or aged out was evicted: its event goes out now.
            if !deferred.isEmpty { finish(deferred) }
            return nil
        case .damaged(let entry):
            try reportDamage(key: key, entry: entry, file: "index")
            return nil
        case .buffered(let bytes, let entry, let keyring):
            if let result = bytes.withUnsafeBytes({ Self.deliver($0, key: key, entry: entry, keyring: keyring, { body($0, entry, $1) }) }) { return result }
            try reportDamage(key: key, entry: entry, file: "active buffer")
            return nil
        case .read(let file, let entry, let keyring):
            let size = entry.recordSize
            // `file` is held until the end of this scope: its mapping stays valid for `body`.
            if let mapped = file.mappedBytes(at: Int(entry.offset), count: size) {
                // Ask for every cache line of the record at once (up to 16 KiB), so that their
                // misses overlap instead of arriving one by one as the checksum walks the record.
                for line in stride(from: 0, to: min(size, 16 << 10), by: 64) { cask_prefetch(mapped.baseAddress! + line) }
                if let result = Self.deliver(mapped, key: key, entry: entry, keyring: keyring, { body($0, entry, $1) }) { return result }
                try reportDamage(key: key, entry: entry, file: file.path)
                return nil
            }
            var complete = false
            var failure: CaskError?
            let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
                do throws(CaskError) {
                    complete = try file.fileSystem.readExactly(file.handle, into: UnsafeMutableRawBufferPointer(buffer), at: Int64(entry.offset))
                } catch {
                    failure = error
                }
                count = size
            }
            if let failure { throw failure }
            if complete, let result = bytes.withUnsafeBytes({ Self.deliver($0, key: key, entry: entry, keyring: keyring, { body($0, entry, $1) }) }) {
                return result
            }
            try reportDamage(key: key, entry: entry, file: file.path)
            return nil
        }
    }

    /// Reads and checks every live record (checksum, key, sequence, decompression) as a read
    /// does, without counting as an access: each damaged record is reported and its key
    /// removed durably, as a read would. Returns how many keys it removed. O(records); for
    /// `cask verify --repair`.
    package func scrub() throws(CaskError) -> Int {
        let keys = liveKeys(at: nil)
        let before = statistics.corruptRecords
        for key in keys { _ = try withRecord(forKey: key, usedAt: nil) { _, _, _ in () } }
        return statistics.corruptRecords - before
    }

    /// Checks a record read for `entry` (checksum, key, sequence, lengths) and calls `body` with
    /// its value, decompressed when needed, and its ``EntryHeader`` (nil unless it is a cache
    /// entry, whose header is taken off the value); nil when any check fails.
    private static func deliver<R>(_ bytes: UnsafeRawBufferPointer, key: String, entry: IndexEntry, keyring: Keyring?,
                                   _ body: (UnsafeRawBufferPointer, EntryHeader?) -> R) -> R? {
        guard case .record(let h) = RecordCodec.decode(bytes, at: 0), h.kind == .value,
              h.sequence == entry.sequence, h.encodedSize == bytes.count else { return nil }
        // A sealed record's expiry is authenticated; the index's came from a hint file or the
        // snapshot, which are not: they must agree, or the item could outlive its TTL.
        if h.isSealed && IndexEntry.indexExpiry(h.expiry) != entry.expiry { return nil }
        let keyBytes = UnsafeRawBufferPointer(rebasing: bytes[Format.recordHeaderSize..<(Format.recordHeaderSize + h.keyLength)])
        guard key.utf8.elementsEqual(keyBytes) else { return nil }
        return ValueCodec.decode(bytes, of: h, keyring: keyring, segment: entry.segment, body)
    }

    /// A record failed its check on read: count and log it, and make the key durably absent so
    /// that no older value of it can come back.
    func reportDamage(key: String, entry: IndexEntry, file: String) throws(CaskError) {
        // With encryption on, the seal is checked too (cask verify names which check failed).
        let failed = options.keyring == nil ? "failed its checksum" : "failed its checksum or its seal's authentication"
        options.logger.error(options.isReadOnly
            ? "record of key \(key) at \(file):\(entry.offset) \(failed); this read-only open no longer returns the key (nothing was written: cask verify --repair removes it)"
            : "record of key \(key) at \(file):\(entry.offset) \(failed); key removed")
        let now = options.clock.now
        try withKeyBytes(key) { keyBytes throws(CaskError) in
            try state.withLock { s throws(CaskError) in
                s.stats.corruptRecords += 1
                guard !s.isClosed, let current = s.index.entry(forKey: keyBytes), current.sequence == entry.sequence else { return }
                if s.options.isReadOnly { return s.drop(keyBytes) }   // this process forgets it; nothing is written
                _ = try s.write(.tombstone(keyBytes, hiding: StoreState.hiding(current)), now: now, durable: false)
            }
        }
    }

    /// Whether a live, unexpired value is stored under `key`. Not an access.
    public func contains(_ key: String) -> Bool {
        let now = options.clock.now
        return state.withLock { s in
            guard !s.isClosed, let e = s.index.entry(forKey: key) else { return false }
            return StoreState.goneCause(e, now: now, ageLimit: s.ageLimitMilliseconds) == nil
        }
    }

    /// The keys of all live, unexpired items, in no particular order, each once. O(n), read
    /// in slices of the store's lock (writers waiting for it go first, and none waits for the
    /// whole walk): every key live for the whole call is listed; one written or removed during
    /// the call may be listed or not.
    public func keys() -> [String] {
        liveKeys(at: options.clock.now)
    }

    /// The keys of the index's entries, walked in slices from the last entry to the first, so
    /// that an entry moved by a removal meanwhile (the last fills the hole) comes from the part
    /// already walked and none is missed; listed once each. With `now`, only live, unexpired
    /// items; without, every entry.
    func liveKeys(at now: Int64?) -> [String] {
        // Listed once by their bytes: a `Set<String>` would merge two keys Swift calls equal
        // (Unicode normal forms) that the store keeps apart.
        var seen = Set<[UInt8]>()
        var keys: [String] = []
        var batch: [String] = []
        state.walkIndexBackwards(entriesPerStep: Self.keysPerSlice, { s, range in
            let age = s.ageLimitMilliseconds
            for n in range {
                let entry = s.index.entry(at: n)
                if let now, StoreState.goneCause(entry, now: now, ageLimit: age) != nil { continue }
                batch.append(s.index.key(of: entry))
            }
        }, endSlice: { _ in }, afterSlice: {
            for key in batch where seen.insert(Array(key.utf8)).inserted { keys.append(key) }   // outside the lock
            batch.removeAll(keepingCapacity: true)
        })
        return keys
    }

    /// Entries ``keys()`` reads in one step of a slice of the lock: each costs a lookup and a `String`.
    static let keysPerSlice = 1024

    /// The number of items in the index (expired items not yet noticed included). O(1).
    public var count: Int { state.gauges().itemCount }

    /// Bytes of live records (headers and keys included).
    public var liveBytes: Int { Int(state.gauges().liveBytes) }

    /// Bytes of all segment and hint files.
    public var fileBytes: Int { Int(state.gauges().fileBytes) }

    /// Counters and sizes at this moment.
    public var statistics: StoreStatistics {
        state.withLock { s in
            var stats = s.stats
            stats.itemCount = s.index.count
            stats.liveBytes = Int(s.liveBytes)
            stats.liveByteTarget = s.liveByteTarget.map { Int($0) }
            stats.fileBytes = Int(s.fileBytes)
            stats.deadBytes = Int(s.usage.values.reduce(Int64(0)) { $0 + max(0, $1.fileBytes - Int64(Format.segmentHeaderSize) - $1.liveBytes) })
            stats.segmentCount = s.segments.count
            stats.indexMemoryBytes = s.index.memoryBytes
            return stats
        }
    }
}

/// One segment file as the store sees it. Sizes in bytes.
public struct SegmentInfo: Sendable, Equatable {
    /// The segment's id (its file is `<id, 10 digits>.cask`).
    public var id: UInt32
    /// Bytes in the file (buffered bytes of the active segment included).
    public var fileBytes: Int
    /// Bytes of records that hold live items.
    public var liveBytes: Int
    /// Whether new records are being appended to it.
    public var isActive: Bool
    /// Whether its hint file exists.
    public var hasHint: Bool
    /// The id of the key its records are sealed with (``StoreEncryption/keyID(of:)``); 0 when
    /// they are not sealed.
    public var keyID: UInt32 = 0
    /// Share of the file that is dead records (0...1), the header excluded.
    public var garbageRatio: Double {
        let payload = fileBytes - Format.segmentHeaderSize
        return payload > 0 ? Double(max(0, payload - liveBytes)) / Double(payload) : 0
    }
}

extension DiskStore {
    /// The ids of the encryption keys the store's segments are sealed with, sorted; empty for a
    /// store without encryption. A previous key whose id is no longer listed (after rotation by
    /// compaction) can be dropped from ``StoreEncryption/previousKeys``. O(segments).
    public var encryptionKeysInUse: [UInt32] {
        Set(segmentInfo().map(\.keyID)).subtracting([0]).sorted()
    }

    /// Every segment, in id order.
    public func segmentInfo() -> [SegmentInfo] {
        state.withLock { s in
            s.usage.keys.sorted().map { id in
                SegmentInfo(id: id, fileBytes: Int(s.usage[id]!.fileBytes), liveBytes: Int(s.usage[id]!.liveBytes),
                            isActive: id == s.active.id, hasHint: s.hintBytes[id] != nil, keyID: s.usage[id]!.keyID)
            }
        }
    }
}
