import Foundation

/// What a cache's shared tier did: see ``CaskCache/sharedTierStatistics``.
public struct SharedTierStatistics: Sendable, Equatable {
    /// Local misses the shared tier answered.
    public var hits: Int
    /// Local misses it did not hold either.
    public var misses: Int
    /// Calls that failed or passed the timeout (reads and sends).
    public var failures: Int
    /// This node's changes the tier acknowledged.
    public var changesSent: Int
    /// This node's changes waiting to be sent (an outage keeps them here).
    public var changesWaiting: Int
    /// Other nodes' changes (and lost histories) applied to the local layers.
    public var noticesApplied: Int
    /// This node's changes the tier refused for good (dropped, not retried).
    public var changesRefused: Int
    /// Get-or-loads this node answered with the value another node loaded (one load per key
    /// across the nodes, ``CacheOptions/sharedTierLoadLease``).
    public var loadsFromOtherNodes: Int
    /// Whether this node follows the tier's changes as they happen (so reads go through it);
    /// false before the first connection and while it is lost.
    public var isFollowing: Bool
}
