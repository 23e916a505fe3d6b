/// The store's sizes and the O(1) questions its background threads and back-pressure ask, read
/// in one hold of the store's lock (``StoreStateLock/gauges()``): one place reads them all, so
/// that no caller takes the lock for a single field.
struct StoreGauges: Sendable, Equatable {
    /// ``StoreState/isClosed``; every other field is zero or false then.
    var isClosed = true
    /// Entries in the index (expired ones not yet noticed included).
    var itemCount = 0
    /// Bytes of the live records (``KeyDirectory/liveBytes``).
    var liveBytes: Int64 = 0
    /// Bytes of all segment and hint files (``StoreState/fileBytes``).
    var fileBytes: Int64 = 0
    /// Records wait in the write buffer (for the flush deadline).
    var hasUnflushedRecords = false
    /// Records wait for an `fdatasync` (written or buffered), for an interval sync.
    var hasUnsyncedRecords = false
    /// Disk use is past the hard limit (``StoreState/isOverHardLimit``): writers wait for compaction.
    var isOverHardLimit = false
    /// Disk use is past the disk budget (``StoreState/diskBudget``): compaction runs more passes.
    var isOverDiskBudget = false
    /// Durable writes waiting for the group commit.
    var waitingCommits = 0
}

extension StoreState {
    /// The gauges at this moment. O(1).
    var gauges: StoreGauges {
        guard !isClosed else { return StoreGauges() }
        return StoreGauges(
            isClosed: false, itemCount: index.count, liveBytes: liveBytes, fileBytes: fileBytes,
            hasUnflushedRecords: writer.size > writer.flushedSize, hasUnsyncedRecords: writer.size > writer.syncedSize,
            isOverHardLimit: isOverHardLimit, isOverDiskBudget: diskBudget.map { fileBytes > $0 } ?? false,
            waitingCommits: commits.count)
    }
}

extension StoreStateLock {
    /// ``StoreState/gauges``, in one short hold of the lock.
    func gauges() -> StoreGauges { withLock { $0.gauges } }
}
