import CCaskSupport
import Synchronization

/// One independently locked part of a ``MemoryCache``: its LRU list and the locks that guard it.
///
/// Reads take one stripe of ``ReadStripes`` and buffer their use; everything else takes every
/// stripe and first applies the buffered uses, in stamp order. So the list a write sees is the
/// one it would see had every read moved its item itself, and two rules keep eviction and the
/// age limit exact: a read of the list's least recently used node, and a read that finds its
/// item past the age limit (its latest use may still be buffered), take the write lock instead.
/// The tail therefore never has a buffered use, and the published ``oldestUse`` is exact.
// @unchecked: `list` is only read under a stripe and only changed under every stripe; each
// stripe's buffer is only touched under its own lock.
@usableFromInline
final class MemoryShard<Value>: @unchecked Sendable {
    @usableFromInline let stripes = ReadStripes()
    /// Read under any stripe, changed under every stripe (hence no dynamic exclusivity check
    /// on the hot path).
    @exclusivity(unchecked) @usableFromInline var list = LRUList<Value>()
    /// Whether the list records uses for ``MemoryCache/takeUses()`` (`list.uses` is not nil).
    @usableFromInline let tracksUses: Bool
    /// The use stamp of the shard's least recently used item (`UInt64.max` when empty),
    /// published under the write lock so that eviction can pick a shard without locking all.
    @usableFromInline let oldestUse = Atomic<UInt64>(.max)

    @usableFromInline init(tracksUses: Bool = false) {
        self.tracksUses = tracksUses
        if tracksUses { list.uses = PendingUses() }
    }

    /// What a read under one stripe found.
    @usableFromInline
    enum StripeRead<Result> {
        case absent
        /// The reader's result, and whether the use is recorded for ``MemoryCache/takeUses()``.
        case found(Result, isRecorded: Bool)
        /// The read must be made under the write lock: the node is the shard's least recently
        /// used, or looks past the age limit, or the stripe's buffer is full.
        case needsWriteLock
    }

    /// Looks `key` up under the calling CPU's stripe and buffers the use at `now`, stamped
    /// under the stripe's lock (so that each stripe's uses are in stamp order).
    @inlinable @inline(__always)
    func read<Reader: MemoryRead>(_ key: String, hash: UInt64, now: Int64, ageMilliseconds: Int64,
                                  reading reader: Reader) -> StripeRead<Reader.Result> where Reader.Value == Value {
        let s = stripes.lockRead()
        defer { stripes.unlockRead(s) }
        let stamp = cask_use_stamp()
        guard let i = list.position(of: key, hash: hash) else { return .absent }
        let previousUse = list.order[Int(i)].accessTime
        guard i != list.tail, !LRUList<Value>.isAgedOut(accessTime: previousUse, now: now, ageMilliseconds: ageMilliseconds),
              stripes.hasRoom(s, at: now),
              let value = list.entries[Int(i)].value else { return .needsWriteLock }
        let (result, recordUse) = reader.read(value, previousUse: previousUse)
        let isRecorded = recordUse && tracksUses
        stripes.append(BufferedUse(node: i, isRecorded: isRecorded, stamp: stamp, time: now), to: s)
        return .found(result, isRecorded: isRecorded)
    }

    /// Whether `key` is held and used within `ageMilliseconds` of `now` (any age when
    /// negative), under one stripe; nil when only the write lock can tell (a use may be buffered).
    @inlinable
    func contains(_ key: String, hash: UInt64, now: Int64, ageMilliseconds: Int64) -> Bool? {
        let s = stripes.lockRead()
        defer { stripes.unlockRead(s) }
        guard let i = list.position(of: key, hash: hash) else { return false }
        if !LRUList<Value>.isAgedOut(accessTime: list.order[Int(i)].accessTime, now: now, ageMilliseconds: ageMilliseconds) { return true }
        return nil
    }

    /// Runs `body` with exclusive access to the list, every buffered use applied first. Do not
    /// call back into the same shard.
    @inlinable @inline(__always)
    func withLock<R>(_ body: (inout LRUList<Value>) -> R) -> R {
        stripes.lockAll()
        defer { stripes.unlockAll() }
        if !stripes.isEmpty { applyBufferedUses() }
        return body(&list)
    }

    /// Applies the buffered uses to the list, oldest stamp first (under every stripe).
    @inlinable @inline(never)
    func applyBufferedUses() {
        stripes.drain { list.apply($0) }
        publishOldest(list)
    }

    @inlinable @inline(__always)
    func publishOldest(_ list: LRUList<Value>) {
        oldestUse.store(list.oldestStamp, ordering: .relaxed)
    }
}
