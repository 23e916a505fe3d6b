/// What one engine's churn child process reports: the run's settings, its figures, and the
/// series the plots are drawn from. Latencies are in nanoseconds.
struct ChurnResult: Codable {
    var engine: String
    var configuration: String
    /// Keys filled before the churn, and random overwrites in the churn.
    var keys: Int
    var puts: Int
    var valueBytes: Int
    var fillSeconds: Double
    /// The timed churn loop alone (the close after it is `closeSeconds`).
    var seconds: Double
    var closeSeconds: Double
    /// The open of the store the churn left (filled, overwritten, cleanly closed), and its
    /// close after one get.
    var reopenSeconds: Double
    var secondCloseSeconds: Double
    var putsPerSecond: Double
    var latency: LatencySummary
    var windowSummary: WindowSummary
    /// The byte limit the engine ran with (cask-limit only).
    var byteLimit: Int64?
    /// Disk use of the store's directory: the largest sample during the churn (the store
    /// open), and after close (Cask's clean close adds its index snapshot, which the byte limit
    /// does not count).
    var diskMaxBytes: Int64
    var diskFinalBytes: Int64
    /// Key and value bytes put by the churn.
    var userBytes: Int64
    /// /proc/self/io `write_bytes` and `cancelled_write_bytes` from the churn's start through
    /// the close.
    var storageWriteBytes: Int64
    var cancelledWriteBytes: Int64
    /// storageWriteBytes / userBytes.
    var writeAmplification: Double
    /// (storageWriteBytes - cancelledWriteBytes) / userBytes: what reached storage, or will.
    var netWriteAmplification: Double
    /// /proc/self/io `wchar` over the same span (bytes handed to write system calls), and
    /// its ratio to userBytes: for engines that rewrite pages in place (LMDB), whose rewrites
    /// of a page still dirty `write_bytes` counts once.
    var syscallWriteBytes: Int64
    var syscallWriteAmplification: Double
    /// Cask only, by the store's own count: record bytes put and compaction output.
    var ownBytesWritten: Int64?
    var ownCompactionBytesWritten: Int64?
    /// (ownBytesWritten + ownCompactionBytesWritten) / userBytes.
    var ownWriteAmplification: Double?
    var peakResidentBytes: Int64
    /// Late wake-ups of a 1 ms timer thread during the churn, and how many puts over 10 ms
    /// overlapped one (CaskBaselines.StallWatch): those waited for the machine.
    var machineStalls: MachineStalls?
    /// Puts completed in each window of `windowSummary.windowMilliseconds`, from the churn's start.
    var windows: [UInt32]
    /// The latency distribution, for the tail plot.
    var curve: [LatencyPoint]
    var diskSamples: [DiskPoint]
}

/// What `StallWatch` saw during a churn.
struct MachineStalls: Codable {
    var lateWakeUps: Int
    var slowPuts: Int
    var slowPutsInStalls: Int
}
