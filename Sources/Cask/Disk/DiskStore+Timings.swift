/// Timings of the store's slow operations, for metrics (file and folder syncs, compaction passes).
extension DiskStore {
    /// Calls `observer` with the duration of every file sync, folder sync and compaction pass
    /// from now on, until the returned observation is cancelled or released.
    ///
    /// Nothing is timed while no observer is registered: a sync then costs one relaxed atomic
    /// load more. `observer` runs on the thread that did the work, sometimes while the store's
    /// lock is held (a sync at a segment's seal): it must be quick and must not call the store
    /// (it would deadlock). Recording into a swift-metrics `Timer` fits. Thread-safe; several
    /// observers may be registered.
    public func observeTimings(_ observer: @escaping @Sendable (CaskTiming) -> Void) -> TimingObservation {
        TimingObservation(timings, id: timings.add(observer))
    }
}
