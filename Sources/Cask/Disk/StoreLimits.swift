/// The cache limits a ``DiskStore`` enforces. All optional; nil means no limit.
///
/// - `byteLimit`: bytes of segment and hint files on disk, never exceeded. Alone it is a complete
///   configuration: the segment size then follows from it
///   (``StoreOptions/defaultSegmentSize(byteLimit:)``, `byteLimit / 16`). The store manages disk
///   use toward `byteLimit − 2.5 × segmentSize` (``StoreOptions/diskBudget``): the rest is room
///   for writes while compaction catches up and for a compaction output and its hint file in
///   flight. LRU eviction keeps live records (with their
///   share of the hint files, about 40 bytes a record) at most `liveRatio` of the budget, and
///   at most the live target (``StoreStatistics/liveByteTarget``): that, less up to half of it
///   while compaction cannot keep up (LimitsAndEviction.md, "When compaction falls behind").
///   Once the limit is reached they stay between 2% under the target and the target (a 50 MB
///   limit alone under random overwrites of 8 KiB values keeps about 30-33 MB). Compaction
///   reclaims the rest. A write that finds disk use above `byteLimit − 1.5 × segmentSize`
///   returns only once it is not: it waits for the compaction thread's passes, or runs passes
///   itself when the thread is not compacting.
/// - `countLimit`: live items; the least recently used go first.
/// - `ageLimit`: an item not read or written for longer than this is gone (never returned, its
///   bytes reclaimed later). Pinned items are exempt.
///
/// "Least recently used" orders items by their last read or write, to the millisecond, and by
/// write order within one millisecond. Pinned items are evicted only after every unpinned one.
public struct StoreLimits: Sendable, Equatable {
    public var byteLimit: Int?
    public var countLimit: Int?
    public var ageLimit: Duration?
    /// Share of the disk budget (``StoreOptions/diskBudget``) that live records may fill at
    /// most (0.1 ... 0.95; default 0.8); the rest is room for garbage between compactions. Higher keeps more items but makes
    /// compaction rewrite more: under a 50 MB limit alone, random overwrites of 8 KiB values had
    /// compaction rewrite 0.62 bytes per byte written at 0.75, 1.06 at 0.8 and 1.58 at 0.85
    /// (`LimitsTests`, 400 MB written, before the store cut its live target when compaction
    /// falls behind; with the cut, 0.45 at 0.8, keeping 0.73 of the limit; 0.57-0.66 since the
    /// share is of the disk budget).
    public var liveRatio: Double = 0.8

    public init(byteLimit: Int? = nil, countLimit: Int? = nil, ageLimit: Duration? = nil) {
        self.byteLimit = byteLimit
        self.countLimit = countLimit
        self.ageLimit = ageLimit
    }
}

/// When compaction runs on its own.
public struct CompactionPolicy: Sendable, Equatable {
    /// Compact automatically on a background thread. `compact()` works either way.
    public var isAutomatic = true
    /// A sealed segment becomes a candidate once this share of it is dead (0.05 ... 1). The
    /// active segment is sealed early, so that compaction can reclaim it, once this share of it
    /// is dead, its dead bytes reach `min(segmentSize / 16, 1 MiB)` (`min(segmentSize / 16,
    /// 4 KiB)` when nothing in it is live, as after removing every key), and nothing was
    /// written to it for a ``checkInterval``: a store written to steadily is not sealed early.
    public var garbageRatio = 0.5
    /// How often the background thread checks while there is something to check: items that
    /// can expire or age out, or dead bytes added to sealed segments since it last looked. It is
    /// also woken at once by a sealed segment and by byte-limit pressure, and otherwise sleeps
    /// without a timer (an idle store causes no wake-ups).
    public var checkInterval: Duration = .seconds(1)
    /// At most this many bytes of live records are rewritten by one compaction pass (a pass
    /// writes one output segment); 0 means the segment size.
    public var maximumPassBytes = 0

    public init() {}
}


/// Something that happened to items, delivered to ``StoreOptions/eventHandler`` on the thread
/// that caused it, after the store's lock is released (the handler may call the store).
public enum StoreEvent: Sendable, Equatable {
    /// The caller removed the key.
    case removed(key: String)
    /// The store dropped the key for `cause`.
    case evicted(key: String, cause: EvictionCause)
    /// Every item was removed.
    case removedAll
    /// A compaction pass finished.
    case compacted(CompactionReport)
}

/// What one compaction did.
public struct CompactionReport: Sendable, Equatable {
    /// Segments rewritten (and deleted).
    public var segmentsCompacted = 0
    /// Bytes of the input segments.
    public var bytesRead = 0
    /// Bytes of the output segment(s).
    public var bytesWritten = 0
    /// Input bytes minus output bytes (hint files excluded).
    public var bytesReclaimed = 0
    /// Live records copied.
    public var recordsCopied = 0
    /// Tombstones dropped because no older record of their key can remain.
    public var tombstonesDropped = 0
    /// Removal records (``DiskStore/removeValues(withPrefix:)``) dropped because no record they
    /// remove can remain.
    public var removalsDropped = 0
    /// Seconds the pass took.
    public var seconds: Double = 0

    public init() {}
}
