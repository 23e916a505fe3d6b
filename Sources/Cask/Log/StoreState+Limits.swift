import CaskFormat

/// Limits, expiry and eviction: which items are gone, and dropping them.
///
/// An item a trim or damage drops goes with a tombstone, exactly like a removal. One the store
/// drops by itself (the size or count limit, its TTL, the age limit) goes without one when no
/// older record of its key can lie outside its record's own segment
/// (``StoreState/hasNoOlderRecordElsewhere(_:)``): no compaction or crash can then bring an older
/// value back, and a crash can bring back only the value it had, as when a tombstone is lost
/// (format-spec.md, "Eviction without a tombstone").
extension StoreState {
    /// Milliseconds of the age limit (0 = none; a limit is at least 1 ms). An item is gone once
    /// more than this has passed since its last read or write.
    var ageLimitMilliseconds: Int64 { limits.ageLimit.map { $0.milliseconds } ?? 0 }

    /// What a tombstone stores in its expiry field: the sequence number of the newest record it
    /// hides (format-spec.md, "Record"), 0 when there is none or it is unknown.
    @inline(__always)
    static func hiding(_ e: IndexEntry?) -> Int64 { Int64(bitPattern: e?.sequence ?? 0) }

    /// Why `entry` may no longer be returned at `now`, or nil while it is live.
    @inline(__always)
    static func goneCause(_ e: IndexEntry, now: Int64, ageLimit: Int64) -> EvictionCause? {
        if e.isPinned { return nil }
        let expiry = e.expiry
        if expiry != 0 && now >= expiry { return .timeToLive }
        if ageLimit > 0 && now - e.accessTime > ageLimit { return .age }
        return nil
    }

    /// The live entry of `key`, marked as used at `now`; nil when there is none. An item found
    /// expired or past the age limit is evicted (with its cause) and gives nil.
    mutating func use(_ key: UnsafeRawBufferPointer, now: Int64) -> IndexEntry? {
        let age = ageLimitMilliseconds
        let found = keys.touch(key) { e -> IndexEntry in
            if Self.goneCause(e, now: now, ageLimit: age) == nil { e.accessTime = now }
            return e
        }
        if limiter.countsRequests { limiter.noteRequest(index.hash(key), keys: index.count, missed: found == nil) }
        guard let entry = found else { return nil }
        if let cause = Self.goneCause(entry, now: now, ageLimit: age) {
            // Harmless `try?`: a failed append leaves the gone item in the index, where every
            // read still finds it gone (this check), and the next read or sweep evicts it again.
            if !options.isReadOnly { try? evict(key, cause: cause, now: now, tombstoneIfNeeded: true) }
            return nil
        }
        return entry
    }

    /// Drops `key` and records the eviction: with a tombstone, or, when `tombstoneIfNeeded` and
    /// no older record of the key lies outside its record's segment, without one. The tombstone
    /// need not be synced: if a crash loses it, the key comes back with its latest value, never
    /// an older one.
    mutating func evict(_ key: UnsafeRawBufferPointer, cause: EvictionCause, now: Int64, tombstoneIfNeeded: Bool = false) throws(CaskError) {
        // A durable write of this key still waits for its sync: it is newer than what this
        // tombstone would hide, and must not be hidden by it.
        if commits.hasWrite(ofKey: key) { return }
        let current = index.entry(forKey: key)
        if tombstoneIfNeeded, let current, hasNoOlderRecordElsewhere(current) {
            drop(key)
            stats.evictionsWithoutTombstone += 1
        } else {
            _ = try write(.tombstone(key, hiding: Self.hiding(current)), now: now, durable: false)
        }
        stats.record(cause)
        if limiter.countsRequests && (cause == .size || cause == .count) { limiter.noteEviction(index.hash(key)) }
        if options.eventHandler != nil {
            work.queue(.evicted(key: String(decoding: key, as: UTF8.self), cause: cause))
        }
    }

    /// Whether every record of `e`'s key older than `e` can only lie in `e`'s own segment: every
    /// other segment, and any compaction input whose deletion failed, holds only newer sequences.
    /// Segments created later hold newer records, or copies of live ones, so this stays true
    /// once the key is gone from the index. O(segments).
    func hasNoOlderRecordElsewhere(_ e: IndexEntry) -> Bool {
        guard e.sequence < lingeringMinimumSequence else { return false }
        for (id, u) in usage where id != e.segment && u.minimumSequence <= e.sequence { return false }
        return true
    }

    /// Evicts the keys of entries matching `isGone`; returns how many. O(n).
    @discardableResult
    mutating func sweep(now: Int64, cause fixed: EvictionCause? = nil, tombstoneIfNeeded: Bool = false,
                        where isGone: (IndexEntry) -> EvictionCause?) throws(CaskError) -> Int {
        var victims: [([UInt8], EvictionCause)] = []
        index.forEach { key, e in
            if let cause = isGone(e) { victims.append((Array(key), fixed ?? cause)) }
        }
        for (key, cause) in victims {
            try key.withBytes { k throws(CaskError) in try evict(k, cause: cause, now: now, tombstoneIfNeeded: tombstoneIfNeeded) }
        }
        return victims.count
    }

    /// Drops every expired or aged-out item (``evict(_:cause:now:tombstoneIfNeeded:)``).
    @discardableResult
    mutating func removeExpired(now: Int64, tombstoneIfNeeded: Bool = false) throws(CaskError) -> Int {
        let age = ageLimitMilliseconds
        return try sweep(now: now, tombstoneIfNeeded: tombstoneIfNeeded) { Self.goneCause($0, now: now, ageLimit: age) }
    }

    /// Applies the count and byte limits after a write of `written` (never evicted by it), and
    /// notes when compaction is due.
    mutating func enforceLimits(now: Int64, written: UnsafeRawBufferPointer? = nil) {
        do {
            if let c = limits.countLimit, index.count > c {
                // After a walk of the index, 1% below the limit, so that the walk is paid once
                // per 1% of the keys written, not per put (StoreState+Eviction.swift).
                let batch = c - c / 100
                try evictInOrder(cause: .count, now: now, sparing: written, tombstoneIfNeeded: true,
                                 until: { $0.index.count <= c }, afterAWalk: { $0.index.count <= batch })
            }
            if let target = liveByteTarget {
                if liveBytes > target {
                    // From the candidates of an earlier walk, just enough; after a walk of the
                    // index, 2% below the target, so that the walk is paid once per 2% of the
                    // live set written, not per put.
                    let batch = target - target / 50
                    try evictInOrder(cause: .size, now: now, sparing: written, tombstoneIfNeeded: true,
                                     until: { $0.liveBytes <= target }, afterAWalk: { $0.liveBytes <= batch })
                }
                // Past the low watermark the compaction thread evicts ahead, off the write path
                // (DiskStore+Eviction.swift); past the disk budget it compacts.
                if fileBytes > diskBudget ?? .max || liveBytes > target - target / 25 {
                    work.wantCompactionForLimit()
                }
            }
        } catch {
            stats.backgroundFailures += 1
            options.logger.warning("could not evict to the store's limits: \(error)")
        }
    }

    /// Live bytes the byte limit allows (nil without one): `byteLimit`, less the hint files'
    /// share. Hint files grow with the live records (a few bytes and the key each), and the limit
    /// counts both (``StoreLimits``). The target does not move with the write rate: when
    /// compaction falls behind, writers wait (``isOverHardLimit``, ``writeDelayNanoseconds``),
    /// and the cache keeps its size.
    var liveByteTarget: Int64? {
        guard let b = limits.byteLimit else { return nil }
        let hints = segmentSet.hintFileBytes
        let segmentBytes = max(1, fileBytes - hints)
        return Int64(Double(b) * Double(segmentBytes) / Double(segmentBytes + hints))
    }

    /// The file bytes the store manages toward under a byte limit: `byteLimit / liveRatio`
    /// (nil without a limit; ``StoreOptions/diskBudget``). Above it, a segment of room before
    /// writers must wait (``isOverHardLimit``); above that, room that is not in ``fileBytes``:
    /// a compaction output and its hint file being written (up to `segmentSize` of records,
    /// and their hint entries). All of it is ``StoreOptions/diskLimit``.
    var diskBudget: Int64? {
        options.diskBudget.map { Int64($0) }
    }

    /// How long a write waits before it returns while disk use is past the disk budget and
    /// under the hard limit (`diskBudget + segmentSize`): up to ``maximumWriteDelayNanoseconds``,
    /// growing with the square of how far into that segment of room it is (0 below
    /// ``minimumWriteDelayNanoseconds``). Writers so slow down as compaction falls behind
    /// (RocksDB's delayed writes): a little past the budget costs nothing, halfway in 250 µs a
    /// write, and a writer reaches the hard limit, where it must wait for a whole compaction
    /// pass (tens of milliseconds of copying and `fsync`s), only when compaction cannot keep up
    /// even with writes a millisecond apart. (Under uniform random overwrites it often cannot:
    /// Performance.md, "Hit ratio under a byte limit".)
    var writeDelayNanoseconds: UInt32 {
        guard let budget = diskBudget else { return 0 }
        let zone = Double(max(1, options.segmentSize)), into = Double(fileBytes - budget)
        guard into > 0 else { return 0 }
        let share = min(1, into / zone)
        let delay = UInt32(Double(Self.maximumWriteDelayNanoseconds) * share * share)
        return delay >= Self.minimumWriteDelayNanoseconds ? delay : 0
    }

    /// Shorter delays are not made: a sleep of any length takes about 50 µs on Linux (the
    /// timer slack), so a write either waits 20 µs or more, or not at all.
    static let minimumWriteDelayNanoseconds: UInt32 = 20_000

    /// The longest slow-down of one write: 1 ms.
    static let maximumWriteDelayNanoseconds: UInt32 = 1_000_000

    /// True when disk use is past the budget's headroom, `diskBudget + segmentSize`: the writer
    /// must compact before acknowledging more. Then one compaction output with its hint file
    /// (records of 100 bytes or more have hint entries under half their size) still fits under
    /// ``StoreOptions/diskLimit``.
    var isOverHardLimit: Bool {
        guard let budget = diskBudget else { return false }
        return fileBytes > budget + Int64(options.segmentSize)
    }
}

extension StoreStatistics {
    mutating func record(_ cause: EvictionCause) {
        switch cause {
        case .size: evictionsBySize += 1
        case .count: evictionsByCount += 1
        case .age: evictionsByAge += 1
        case .timeToLive: expirations += 1
        case .damage: break   // counted as corruptRecords where found
        case .cost, .memoryPressure: break   // the memory cache's causes
        }
    }
}
