/// Counters and sizes of a ``DiskStore`` at one moment. All sizes in bytes.
public struct StoreStatistics: Sendable, Equatable {
    /// Live (readable, unexpired as of the last check) items.
    public var itemCount = 0
    /// Bytes of the records of live items, headers and keys included.
    public var liveBytes = 0
    /// Bytes of all segment and hint files.
    public var fileBytes = 0
    /// Bytes of segment records that no longer hold a live item (overwritten, removed, expired, evicted).
    public var deadBytes = 0
    /// Number of segment files.
    public var segmentCount = 0
    /// `fdatasync` calls on segment files since open (durable writes from several threads share
    /// them: group commit).
    public var segmentSyncs = 0
    /// Reads that found a live item.
    public var hits = 0
    /// Reads that found nothing (or an expired item).
    public var misses = 0
    /// Records written by puts and removes.
    public var writes = 0
    /// Records found damaged (on open, on read or by verification).
    public var corruptRecords = 0
    /// Damaged byte ranges found on open.
    public var damagedRanges = 0
    /// Keys dropped on open because a damaged range might have held a newer record of them.
    public var keysDroppedByRecovery = 0
    /// Keys an open found removed by a removal record (``DiskStore/removeValues(withPrefix:)``)
    /// whose records were still on disk: not lost, removed as asked.
    public var keysRemovedByPrefixAtOpen = 0
    /// Live items an open found removed by a tag removal (``DiskStore/removeValues(taggedWith:)``)
    /// whose records were still on disk: not lost, removed as asked.
    public var keysRemovedByTagAtOpen = 0
    /// Bytes cut from a torn tail on open.
    public var tornTailBytes = 0
    /// Segments whose hint file was missing or invalid and that were scanned on open.
    public var segmentsScanned = 0
    /// Segments loaded from their hint file on open.
    public var segmentsLoadedFromHints = 0
    /// Whether open loaded the index from the snapshot written at the last clean close (then no
    /// hint file is read and no segment scanned).
    public var indexLoadedFromSnapshot = false
    /// Items expired by their TTL.
    public var expirations = 0
    /// Items evicted by the byte limit.
    public var evictionsBySize = 0
    /// Of ``evictionsBySize``: items the compaction thread evicted ahead of the byte limit, off
    /// the write path (LimitsAndEviction.md, "Evicting ahead of the limit").
    public var evictionsAhead = 0
    /// Puts of new keys the frequency-aware policy declined to store
    /// (``EvictionPolicy/frequencyAware``).
    public var admissionsDeclined = 0
    /// Items evicted by the count limit.
    public var evictionsByCount = 0
    /// Items dropped by the age limit.
    public var evictionsByAge = 0
    /// Of the evictions and expirations above, those that needed no tombstone: no older record
    /// of the key lay outside the evicted record's segment (format-spec.md, "Eviction without a
    /// tombstone"). The others each appended a tombstone record.
    public var evictionsWithoutTombstone = 0
    /// Rollovers that made a prepared segment active behind a gate (format-spec.md,
    /// "Rollover"); for tests that must know they reached that path.
    package var rolloversBehindGate = 0
    /// Compaction passes run.
    public var compactions = 0
    /// The live bytes the byte limit keeps now (nil without one): `byteLimit × liveRatio`,
    /// less a cut while compaction cannot keep up (``StoreLimits/liveRatio``).
    public var liveByteTarget: Int?
    /// Writes that found disk use past `byteLimit − 1.5 × segmentSize` and returned only once it was
    /// not, waiting for the compaction thread's passes or compacting themselves (the writers'
    /// back-pressure when compaction falls behind; each is a slow write).
    public var compactionsOnTheWritePath = 0
    /// Writes slowed down (by 20 µs to 1 ms each) because disk use was past the disk budget, in
    /// the segment of room before writes must wait for compaction (``compactionsOnTheWritePath``).
    public var delayedWrites = 0
    /// Walks of the whole index that a write or trim did under the lock to find eviction
    /// candidates (for benchmarks: each is a slow write).
    package var evictionWalksOnTheWritePath = 0
    /// Bytes of segments read by compaction.
    public var compactionBytesRead = 0
    /// Bytes written by compaction (output segments).
    public var compactionBytesWritten = 0
    /// Bytes of records written by puts and removes (for write amplification).
    public var bytesWritten = 0
    /// Bytes of memory the in-memory index holds (hash slots, entries, key arena).
    public var indexMemoryBytes = 0
    /// Failed background flushes or syncs (also logged).
    public var backgroundFailures = 0
}
