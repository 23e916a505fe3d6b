/// The store's background jobs, named: what a change under the lock can leave for after it,
/// and what ``PendingWork`` has asked for and woken already. One set replaces the flags each
/// job used to have; ``DiskStore/schedule(_:)`` is the one place that turns a set into wake-ups
/// of the threads that run them (Architecture.md, "Background work").
struct BackgroundJobs: OptionSet, Sendable, Hashable {
    let rawValue: UInt8

    /// Seal the nearly full active segment, or sync the sealed one and open the gate behind it
    /// (the flush thread).
    static let seal = BackgroundJobs(rawValue: 1 << 0)
    /// Write a handed-off buffer or make a noted writeback request, outside the lock (the
    /// buffer writer thread).
    static let writeBuffer = BackgroundJobs(rawValue: 1 << 1)
    /// Run a compaction pass now (the compaction thread).
    static let compact = BackgroundJobs(rawValue: 1 << 2)
    /// Look at the store at the compaction thread's next interval: an item can expire or age
    /// out, or a sealed segment gained dead bytes. Arms that thread; never a reason on its own
    /// to hand work over.
    static let lookForCompaction = BackgroundJobs(rawValue: 1 << 3)
    /// Compact on the writer's own thread before it returns: files are over the hard limit.
    static let compactOnWritePath = BackgroundJobs(rawValue: 1 << 4)

    /// The jobs that make a hand-over worth acting on (all but ``lookForCompaction``).
    var needsHandOver: Bool { !subtracting(.lookForCompaction).isEmpty }
}
