import Synchronization

/// The memory layer's copies of the disk layer's records, and the rules that keep them true to
/// it: the one component of the cache facade that knows both layers.
///
/// - **A copy never outlives its record.** A copy is made from a record the disk layer read
///   or wrote, only if no change to the key was recorded since the call began (the disk
///   layer's ``RecordChanges``, checked under its lock); before every lookup the changes not
///   yet applied drop the copies of records that went. The disk layer never calls up: it
///   records its changes, and this component pulls them.
/// - **Hits count on disk.** A hit the memory layer answers alone is recorded in its shard;
///   ``flushUses()`` hands those uses to the disk layer (``DiskStore/recordUses(_:)``), before
///   every call of the facade that lets the disk layer decide or report anything by access time
///   (writes and their evictions, trims, expiry, metadata, compaction, close), and from a
///   thread of its own ``useFlushInterval`` after a hit, so that the disk layer's own decisions
///   (background eviction, the age limit's sweep) see them too.
///
/// Thread-safe. Lock order: the hand-down lock, then the disk layer's lock, then the change
/// journal's, then a memory shard's; nothing here calls the disk layer while holding the
/// journal's or a shard's lock.
@usableFromInline
final class MemoryCopies: Sendable {
    @usableFromInline let memory: MemoryCache<CaskCache.MemoryItem>
    /// The disk layer's change journal; nil when the disk layer is read-only (another process
    /// changes it: every hit is then confirmed by the disk layer instead).
    @usableFromInline let changes: RecordChanges?
    /// The tier below, through the one contract between the layers.
    let tier: any CacheTier
    @usableFromInline let flusher: BackgroundThread?
    /// Held while uses are taken from the memory layer and handed down, so that a hand-down
    /// never overlaps another: a flush that finds nothing pending then still waits for the
    /// flusher's batch to reach the disk layer before the facade reads access times there.
    /// Holds how many batches were handed down. (Not `Locked<Void>`: ThreadSanitizer takes an
    /// access to an empty value for one to the lock's own pointer, which sits at the same address.)
    private let handingDown: Locked<Int>

    /// How long after a memory hit its use reaches the disk layer at the latest, when no call
    /// of the facade hands it over first.
    static let useFlushInterval = Duration.milliseconds(10)

    /// `tracksChanges`: false when another process changes the tier (a read-only disk layer):
    /// every hit is then confirmed by the tier, and no use is recorded.
    init(memory: MemoryCache<CaskCache.MemoryItem>, tier: any CacheTier, tracksChanges: Bool) {
        self.memory = memory
        self.tier = tier
        let handingDown = Locked(0)
        self.handingDown = handingDown
        guard tracksChanges else {
            changes = nil
            flusher = nil
            return
        }
        changes = tier.changeJournal()
        // The thread holds the tier weakly, and this object not at all: dropping the cache
        // closes its store at once, not at the thread's next run.
        let weakTier = WeakTier(tier)
        flusher = BackgroundThread(name: "cask.uses", interval: Self.useFlushInterval,
                                   isArmed: { memory.mayHaveUsesOrdered }) {
            guard let tier = weakTier.tier else { return false }
            Self.handDownUses(of: memory, to: tier, holding: handingDown)
            return true
        }
    }

    deinit {
        flusher?.stop()
        flushUses()
    }

    /// Applies the disk layer's changes not applied yet: each drops the copy of the record
    /// that went (a copy of a newer record stays). One relaxed and one acquiring load when
    /// there are none.
    @inlinable @inline(__always)
    func catchUp() {
        // Optional chaining borrows the journal: no retain and release on every hit.
        if changes?.hasUnapplied ?? false { applyChanges() }
    }

    @usableFromInline
    func applyChanges() {
        changes?.applyUnapplied { seen in
            guard let seen else { return memory.removeAll() }   // fell behind: no copy can be trusted
            for change in seen {
                guard let key = change.key else {
                    memory.removeAll()
                    continue
                }
                memory.removeValue(forKey: key) { $0.sequence <= change.through }
            }
        }
    }

    /// After a lookup: makes sure a use the memory layer recorded reaches the disk layer
    /// within ``useFlushInterval`` (two loads, and no call, when none is pending or the
    /// flusher is already armed). The flusher clears its flag and then checks for uses
    /// before it sleeps; a use is recorded and then this checks the flag: both sequentially
    /// consistent, so one of the two always sees the other.
    @inlinable @inline(__always)
    func noteLookup() {
        if memory.mayHaveUses && !(flusher?.armed.load(ordering: .sequentiallyConsistent) ?? true) { armFlusher() }
    }

    @usableFromInline
    func armFlusher() { flusher?.arm() }

    /// Hands the uses the memory layer recorded to the disk layer now, and waits for a batch
    /// the flusher took to get there (one uncontended lock and one relaxed load when there
    /// are none).
    @usableFromInline
    func flushUses() {
        Self.handDownUses(of: memory, to: tier, holding: handingDown)
    }

    private static func handDownUses(of memory: MemoryCache<CaskCache.MemoryItem>, to tier: any CacheTier, holding lock: Locked<Int>) {
        lock.withLock { batches in
            guard memory.mayHaveUses else { return }
            tier.recordUses(memory.takeUses())
            batches += 1
        }
    }

    /// Keeps `item` as the copy of its record unless a change to `key` was recorded since
    /// `mark` (``RecordChanges/mark``, read before the disk layer was called), then evicts
    /// what the memory layer's limits call for (outside every lock). `usedAt`: a time no later
    /// than the disk layer's last use of the record, so that the copy is never younger.
    func keep(_ item: CaskCache.MemoryItem, forKey key: String, cost: Int, usedAt: Int64, since mark: UInt64) {
        guard let changes else {
            memory.setValue(item, forKey: key, cost: cost)
            return
        }
        changes.withChanges(since: mark) { seen in
            guard let seen, !seen.contains(where: { ($0.key == nil || $0.key == key) && $0.through >= item.sequence }) else { return }
            memory.insert(item, forKey: key, cost: cost, now: usedAt)
        }
        memory.enforceLimitsIfNeeded()
    }

    /// The mark to pass to ``keep(_:forKey:cost:usedAt:since:)`` for a tier call that starts now.
    var mark: UInt64 { changes?.mark ?? 0 }

    /// Whether the tier's live record of `key` is still `sequence`, counted as a use at `now`,
    /// after handing it the uses recorded so far; else the copy is dropped.
    @usableFromInline
    func confirm(_ key: String, sequence: UInt64, usedAt now: Int64) throws(CaskError) -> Bool {
        flushUses()
        guard try tier.confirm(key, record: sequence, usedAt: now) else {
            memory.removeValue(forKey: key)
            return false
        }
        return true
    }
}

/// The flusher's reference to the tier: weak, so that the thread does not keep it open.
private final class WeakTier: @unchecked Sendable {
    // Written once, before the thread can read it; weak loads are atomic.
    weak var tier: (any CacheTier)?
    init(_ tier: any CacheTier) { self.tier = tier }
}
