/// What ``CaskCache/loadedValue(forKey:as:options:loader:)`` answered, and whether it is stale.
public struct LoadedValue<Value: Sendable>: Sendable {
    /// The value: fresh (from the cache or the loader) or, when ``isStale``, a stale one.
    public var value: Value
    /// Whether the value's fresh period had ended: served from its stale window because a
    /// refresh took longer than the soft or hard timeout, the loader failed (``loaderError``),
    /// or an earlier failure's throttle was still running.
    public var isStale: Bool
    /// When a stale value was served because the loader failed: its error.
    public var loaderError: (any Error)?

    @usableFromInline
    init(value: Value, isStale: Bool, loaderError: (any Error)? = nil) {
        self.value = value
        self.isStale = isStale
        self.loaderError = loaderError
    }
}

/// Why ``CaskCache/value(forKey:as:options:loader:)`` could not answer a value.
public enum CacheLoadError: Error, Sendable, CustomStringConvertible {
    /// The loader threw `error` and there was no stale value to serve instead.
    case loaderFailed(key: String, error: any Error)
    /// The load took longer than ``CacheEntryOptions/hardTimeout`` and there was no stale value.
    /// The load goes on while other callers wait for it.
    case timedOut(key: String, after: Duration)
    /// The calling task was cancelled while it waited. The load goes on while other callers
    /// wait for it, or when it refreshes a stored value.
    case cancelled(key: String)
    /// The cache itself failed (reading, storing, coding, an option out of range).
    case cache(CaskError)

    public var description: String {
        switch self {
        case let .loaderFailed(key, error): return "the loader of '\(key)' failed: \(error); no stale value to serve instead"
        case let .timedOut(key, after): return "the load of '\(key)' took longer than its hard timeout (\(after)); no stale value to serve instead"
        case let .cancelled(key): return "the task waiting for '\(key)' was cancelled"
        case let .cache(error): return error.description
        }
    }
}
