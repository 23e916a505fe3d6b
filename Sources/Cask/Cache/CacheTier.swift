import Foundation

/// What the cache facade needs from the tier below its memory layer: the one contract between
/// them. ``DiskStore`` implements it; a remote tier could too. The tier never calls up: it
/// records which records go (``changeJournal()``), and the facade pulls.
///
/// Every record a tier holds has an identity, its ``TierRecord``: a sequence number that grows
/// with every write and an expiry. A memory copy is of one record and lives no longer than it.
/// Implementations are thread-safe.
protocol CacheTier: AnyObject, Sendable {
    /// Stores `value` (encoded bytes) as a plain value; returns the record it wrote, or nil when
    /// the tier's admission policy declined to store it.
    func write(_ value: UnsafeRawBufferPointer, forKey key: String, timeToLive: Duration?, isPinned: Bool) throws(CaskError) -> TierRecord?

    /// Stores `value` as a cache entry fresh for `freshFor` from the tier's now, then stale for
    /// `staleWindow`, listing `tags`; returns the record it wrote (with the end of its fresh
    /// period), or nil when its admission policy declined to store it. The tier's clock and
    /// expiry rule decide the times.
    func write(_ value: UnsafeRawBufferPointer, forKey key: String, freshFor: Duration, staleWindow: Duration, tags: [String]) throws(CaskError) -> TierRecord?

    /// The live record of `key` as a read of it at the tier's now (it counts as a use): its
    /// value's bytes and its identity. A cache entry in its stale window is returned too. Nil
    /// when it holds none.
    func read(forKey key: String) throws(CaskError) -> TierRead?

    /// Whether the live record of `key` is still `record` (a sequence number), counted as a use
    /// at `now` (ms of the tier's clock) when it is.
    func confirm(_ key: String, record: UInt64, usedAt now: Int64) throws(CaskError) -> Bool

    /// Counts reads the facade answered from its copies as uses: (key, ms of the tier's clock).
    func recordUses(_ uses: [(String, Int64)])

    /// The journal of records that go, started on first call (a tier nobody asks keeps none).
    func changeJournal() -> RecordChanges
}

/// A record's identity in a ``CacheTier``: its sequence number, its expiry (ms since 1970, 0 =
/// none) and, for a cache entry, the end of its fresh period (ms since 1970; 0 for a plain
/// value).
struct TierRecord: Sendable, Equatable {
    let sequence: UInt64
    let expiry: Int64
    var freshUntil: Int64 = 0
}

/// A record as ``CacheTier/read(forKey:)`` returns it.
struct TierRead: Sendable {
    let data: Data
    let record: TierRecord
}
