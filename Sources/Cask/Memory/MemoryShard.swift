import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One independently locked part of a ``MemoryCache``: its LRU list and the mutex that guards it.
// @unchecked: `list` is only touched between pthread_mutex_lock and pthread_mutex_unlock.
@usableFromInline
final class MemoryShard<Value>: @unchecked Sendable {
    @usableFromInline let mutex = PthreadMutex.make()
    /// Guarded by `mutex`, which also rules out overlapping accesses (hence no dynamic
    /// exclusivity check on the hot path).
    @exclusivity(unchecked) @usableFromInline var list = LRUList<Value>()
    /// The use number of the shard's least recently used item (`UInt64.max` when empty),
    /// published under the shard's lock so that eviction can pick a shard without locking all.
    @usableFromInline let oldestUse = Atomic<UInt64>(.max)

    @usableFromInline init(tracksUses: Bool = false) {
        if tracksUses { list.uses = PendingUses() }
    }

    deinit { PthreadMutex.destroy(mutex) }

    /// Runs `body` with exclusive access to the list. Do not call back into the same shard.
    @inlinable @inline(__always)
    func withLock<R>(_ body: (inout LRUList<Value>) -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(&list)
    }

    @inlinable @inline(__always)
    func publishOldest(_ list: LRUList<Value>) {
        oldestUse.store(list.oldestStamp, ordering: .relaxed)
    }
}
