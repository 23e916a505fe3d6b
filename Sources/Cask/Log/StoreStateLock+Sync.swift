/// Syncing the active segment without holding the store's lock over the `fdatasync`.
extension StoreStateLock {
    /// Flushes the active segment under the lock and `fdatasync`s it outside, like the group
    /// commit: records appended before this call are durable when it returns. A failed sync
    /// fails what it covered, as ``StoreState/syncActive()`` does. Used by compaction (before
    /// its inputs can go) and by the background rollover (so that the sync left under the lock
    /// at the seal covers only what came since).
    func syncActiveOutsideLock() throws(CaskError) {
        // Behind a shut gate the sealed segment is synced first, also outside the lock.
        if let gate = withLock({ $0.writer.predecessor }) { try gate.sync() }
        let target = try withLock { s throws(CaskError) -> (file: SegmentFile, size: Int64)? in
            try s.flush()
            guard s.writer.syncedSize < s.writer.flushedSize else { return nil }
            s.stats.segmentSyncs += 1
            return (s.active, s.writer.flushedSize)
        }
        guard let target else { return }
        do throws(CaskError) { try target.file.fileSystem.sync(target.file.handle) } catch {
            withLock { s in
                // A segment sealed meanwhile was synced by its rollover (or failed its writes there).
                if s.writer.id == target.file.id { s.failUnsynced(error, now: s.options.clock.now) }
            }
            throw error
        }
        withLock { s in if s.writer.id == target.file.id { s.tail.markSynced(through: target.size) } }
    }
}
