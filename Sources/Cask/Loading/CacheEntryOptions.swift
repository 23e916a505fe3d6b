/// How ``CaskCache/loadedValue(forKey:as:options:loader:)`` keeps and refreshes one entry:
/// a fresh period, then a stale window, then gone (see <doc:LoadingValues>).
///
/// Durations are wall-clock (the disk layer's ``StoreOptions/clock``) for the entry's periods,
/// and real time (the task's clock) for the timeouts. Checked by every call that uses them:
/// an option out of range throws ``CacheLoadError/cache(_:)`` with
/// ``CaskError/invalidOption(_:)``, and nothing is loaded or stored.
public struct CacheEntryOptions: Sendable, Equatable {
    /// How long a loaded value is fresh: returned without calling the loader. More than zero.
    public var timeToLive: Duration
    /// How long after its fresh period a value is kept as stale: served while a refresh runs
    /// (see ``softTimeout``) and when the loader fails (fail-safe), across restarts too. Zero
    /// (the default): the value is gone when its fresh period ends.
    public var staleWindow: Duration
    /// When set, a fraction of ``timeToLive`` greater than 0 and less than 1: a read after that
    /// part of the fresh period returns the fresh value at once and starts one background
    /// refresh (eager refresh), so that hot keys rarely go stale.
    public var eagerRefresh: Double?
    /// A random extra fresh time, from zero up to this, added to each loaded value's
    /// ``timeToLive`` so that keys loaded together do not all expire together. Zero by default.
    public var timeToLiveJitter: Duration
    /// With a stale value at hand: how long a caller waits for the refresh before it is served
    /// the stale value (the refresh goes on in the background and is stored). Nil: as long as
    /// the load takes (up to ``hardTimeout``).
    public var softTimeout: Duration?
    /// The longest any caller waits for a load: then it is served the stale value when there
    /// is one (a fail-safe activation), else it gets ``CacheLoadError/timedOut(key:after:)``.
    /// Nil: no limit.
    public var hardTimeout: Duration?
    /// After the loader failed and a stale value was served instead, how long stale reads of
    /// the key return it without calling the loader again. 30 seconds by default.
    public var failSafeThrottle: Duration
    /// Labels the stored entry is written with, so that ``CaskCache/removeValues(taggedWith:)-470wr``
    /// removes it together with every other entry that lists one of them (each tag 1 to 255
    /// UTF-8 bytes, at most 64). Empty by default. Tags are kept on disk with the entry, so a
    /// removal by tag holds across restarts.
    public var tags: Set<String>

    public init(timeToLive: Duration, staleWindow: Duration = .zero, eagerRefresh: Double? = nil,
                timeToLiveJitter: Duration = .zero, softTimeout: Duration? = nil, hardTimeout: Duration? = nil,
                failSafeThrottle: Duration = .seconds(30), tags: Set<String> = []) {
        self.timeToLive = timeToLive
        self.staleWindow = staleWindow
        self.eagerRefresh = eagerRefresh
        self.timeToLiveJitter = timeToLiveJitter
        self.softTimeout = softTimeout
        self.hardTimeout = hardTimeout
        self.failSafeThrottle = failSafeThrottle
        self.tags = tags
    }

    /// Whether every option is in its range (``validate()`` says which is not). Inlinable and
    /// without allocation for the numeric ranges, on every fresh hit of the loader API; the
    /// tags, when there are any, are checked by ``validate()``.
    @inlinable
    var isValid: Bool {
        guard timeToLive >= .milliseconds(1), staleWindow >= .zero, timeToLiveJitter >= .zero,
              failSafeThrottle >= .zero else { return false }
        if let f = eagerRefresh, !(f > 0 && f < 1) { return false }
        if let t = softTimeout, t <= .zero { return false }
        if let t = hardTimeout, t <= .zero { return false }
        return tags.isEmpty || tagsAreValid
    }

    /// Whether ``tags`` are in range (``validate()`` says how not).
    @usableFromInline
    var tagsAreValid: Bool {
        do throws(CaskError) { try validate(); return true } catch { return false }
    }

    /// How long before the end of a fresh period of ``timeToLive`` a read starts an eager
    /// refresh, in milliseconds; nil without ``eagerRefresh``.
    @usableFromInline
    var eagerLeadMilliseconds: Int64? {
        eagerRefresh.map { Int64((Double(timeToLive.milliseconds) * (1 - $0)).rounded(.up)) }
    }

    /// Throws ``CaskError/invalidOption(_:)`` naming the first option out of its range.
    func validate() throws(CaskError) {
        guard timeToLive >= .milliseconds(1) else { throw .invalidOption("CacheEntryOptions.timeToLive must be at least 1 ms (got \(timeToLive))") }
        guard staleWindow >= .zero else { throw .invalidOption("CacheEntryOptions.staleWindow must not be negative (got \(staleWindow))") }
        guard timeToLiveJitter >= .zero else { throw .invalidOption("CacheEntryOptions.timeToLiveJitter must not be negative (got \(timeToLiveJitter))") }
        guard failSafeThrottle >= .zero else { throw .invalidOption("CacheEntryOptions.failSafeThrottle must not be negative (got \(failSafeThrottle))") }
        if let f = eagerRefresh, !(f > 0 && f < 1) {
            throw .invalidOption("CacheEntryOptions.eagerRefresh must be more than 0 and less than 1 (got \(f))")
        }
        for (name, t) in [("softTimeout", softTimeout), ("hardTimeout", hardTimeout)] {
            if let t, t <= .zero { throw .invalidOption("CacheEntryOptions.\(name) must be more than zero (got \(t))") }
        }
        _ = try DiskStore.checkedTags(sortedTags)
    }

    /// ``tags`` in a fixed order (their bytes sorted), as the entry header lists them.
    var sortedTags: [String] {
        tags.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
