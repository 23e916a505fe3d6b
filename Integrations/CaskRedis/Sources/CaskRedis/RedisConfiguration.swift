/// Where a ``RedisSharedTier`` finds Redis, and how it names what it stores there.
public struct RedisConfiguration: Sendable {
    /// The server's host name or address. Default `127.0.0.1`.
    public var host = "127.0.0.1"
    /// The server's port. Default 6379.
    public var port = 6379
    /// The ACL user name for `AUTH` (nil: `default` when a password is set).
    public var username: String?
    /// The password for `AUTH` (nil: none).
    public var password: String?
    /// The database number (`SELECT`). Default 0.
    public var database = 0
    /// Put before every Redis key the tier writes, so that several caches share one server.
    /// Default `cask:`. Every node of one cache must use the same prefix.
    public var keyPrefix = "cask:"
    /// The longest a command waits for its reply before its connection is closed; and the
    /// connect timeout. Default 1 s (the cache's own ``CacheOptions/sharedTierTimeout`` is
    /// usually shorter and answers the caller first).
    public var commandTimeout: Duration = .seconds(1)
    /// How many changes the history stream keeps (approximately): a node that was away for
    /// more than this many changes drops its local copies when it comes back. Default 100,000.
    public var historyLength = 100_000
    /// How long a removal's record (a key's tombstone, a prefix's or tag's removal time) is
    /// kept so that an older write queued by a node during an outage cannot bring the value
    /// back. Default 24 hours; a node's queue older than this may resurrect what it covers.
    public var removalRetention: Duration = .seconds(86_400)

    public init(host: String = "127.0.0.1", port: Int = 6379) {
        self.host = host
        self.port = port
    }
}
