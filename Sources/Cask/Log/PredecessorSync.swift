import Synchronization

/// The `fdatasync` a segment sealed in the background still owes, and the gate it holds shut
/// (format-spec.md, "Rollover"): the next segment's records stay in its writer's memory until
/// this sync has made the sealed segment durable, so the order on disk is the same as with a
/// sync under the lock, while no put waits for the device.
///
/// Thread-safe: the flush thread syncs it outside the store's lock; the hint writer waits for
/// it before writing the sealed segment's hint; a writer under the lock that cannot wait any
/// longer (its buffer reached the gate's limit, a sync, close) syncs it itself. Whoever comes
/// second waits for the first and shares its outcome: the sync runs once, and a failure is
/// never retried and trusted.
final class PredecessorSync: Sendable {
    /// The sealed segment.
    let file: SegmentFile
    /// Set once the sync succeeded: read without waiting (a writer under the store's lock asks
    /// on every append while the gate is shut, and must not wait for a sync in progress).
    private let durable = Atomic<Bool>(false)
    /// Serializes the sync; holds its error once it failed.
    private let failure = Locked<CaskError?>(nil)

    init(file: SegmentFile) { self.file = file }

    /// Whether the sealed segment is known durable (the gate is open). Never waits.
    var isDurable: Bool { durable.load(ordering: .acquiring) }

    /// Makes the sealed segment durable, or waits for the thread doing it. Throws the sync's
    /// error, then and on every later call.
    func sync() throws(CaskError) {
        if isDurable { return }
        try failure.withLock { f throws(CaskError) in
            if let f { throw f }
            if isDurable { return }
            do throws(CaskError) { try file.fileSystem.sync(file.handle) } catch {
                f = error
                throw error
            }
            durable.store(true, ordering: .releasing)
        }
    }
}
