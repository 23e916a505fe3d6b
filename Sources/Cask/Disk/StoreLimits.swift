/// The cache limits a ``DiskStore`` enforces. All optional; nil means no limit.
///
/// - `byteLimit`: bytes of cached data: the live items' records (key, value as stored, and a
///   header of 40 bytes) with their share of the hint files (a few bytes and the key per
///   item), as PINCache, YYCache and python-diskcache count the data they hold. Alone it is a
///   complete configuration: the segment size follows from it
///   (``StoreOptions/defaultSegmentSize(byteLimit:)``, `byteLimit / 32`). Once the limit is
///   reached, LRU eviction keeps the live items between 2% under it and the limit, at any
///   write rate: when compaction falls behind, writers are slowed, and the cache never shrinks
///   to make room. The files hold that data and the garbage compaction has not reclaimed yet:
///   the store manages them toward ``StoreOptions/diskBudget`` (`byteLimit / liveRatio`) and
///   never lets them pass ``StoreOptions/diskLimit`` (the budget plus 4 segments; with the
///   defaults about 1.55 × `byteLimit`). A write that finds the files past the budget plus a
///   segment returns only once they are not: it waits for the compaction thread's passes, or
///   runs passes itself when the thread is not compacting. An item bigger than the limit is
///   refused.
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
    /// The share of the files that live records fill at steady state under a byte limit
    /// (0.1 ... 0.95; default 0.7): the disk budget is `byteLimit / liveRatio`
    /// (``StoreOptions/diskBudget``). Higher keeps the files closer to the data but makes
    /// compaction copy more per byte written (the Performance article's write amplification):
    /// under sustained random overwrites of 100-byte values, 0.7 copied 0.35 bytes per byte
    /// written, 0.75 0.62 and 0.8 1.45, with writers slowed at 0.8 (Performance.md, "Hit ratio
    /// under a byte limit").
    public var liveRatio: Double = 0.7
    /// Which items a full store keeps (``EvictionPolicy``). Default
    /// ``EvictionPolicy/leastRecentlyUsed``: every put is stored.
    public var policy: EvictionPolicy = .leastRecentlyUsed

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
