// The errors of a shared-tier call (see <doc:ManyMachines>).

/// A shared-tier call passed ``CacheOptions/sharedTierTimeout``.
public struct SharedTierTimeout: Error, Sendable, CustomStringConvertible {
    /// The limit it passed.
    public let limit: Duration
    /// Says which limit passed.
    public var description: String { "the shared tier did not answer within \(limit)" }
}

/// Thrown by a ``SharedTier`` for a change it will never apply (a value too large, a script
/// error): the outbox drops the change instead of retrying it (which would hold back every
/// change queued after it), and counts it in ``SharedTierStatistics/changesRefused``.
public struct SharedTierRefusal: Error, Sendable, CustomStringConvertible {
    /// Why, in the tier's words.
    public let reason: String
    /// A refusal for `reason`.
    public init(reason: String) { self.reason = reason }
    /// Says why.
    public var description: String { "the shared tier refused the change: \(reason)" }
}
