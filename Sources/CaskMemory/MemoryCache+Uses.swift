import Synchronization

extension MemoryCache {
    /// Whether ``takeUses()`` may have something (one relaxed load).
    @inlinable @inline(__always)
    package var mayHaveUses: Bool { usesPending.load(ordering: .relaxed) }

    /// ``mayHaveUses``, ordered with the store that sets it (sequentially consistent): for a
    /// thread that decides by it whether to sleep.
    package var mayHaveUsesOrdered: Bool { usesPending.load(ordering: .sequentiallyConsistent) }

    /// The recorded hits not taken before (see ``value(forKey:now:_:)``), as
    /// (key, milliseconds of the latest recorded hit), each once; then forgets them. Takes each
    /// shard's lock in turn.
    package func takeUses() -> [(String, Int64)] {
        guard usesPending.load(ordering: .relaxed) else { return [] }
        usesPending.store(false, ordering: .relaxed)
        var out: [(String, Int64)] = []
        for shard in shards {
            shard.withLock { list in
                guard list.uses != nil else { return }
                let entries = list.entries
                list.uses!.take(into: &out) { entries[Int($0)].key }
            }
        }
        return out
    }

    /// How many uses were recorded since the cache was made (for the facade's hit count).
    /// Takes each shard's lock in turn.
    package var recordedUseCount: Int {
        shards.reduce(0) { sum, shard in sum + shard.withLock { $0.uses?.recorded ?? 0 } }
    }
}
