import Foundation

/// A cache tier shared by several processes or machines (Redis, for instance), below each
/// process's memory and disk layers. A ``CaskCache`` given one in ``CacheOptions/sharedTier``
/// reads through it after a local miss (its `async` reads only: a synchronous call never waits
/// on a network), sends it every write and removal after the local one, and applies the
/// changes it reports to the local layers, so that every node's local copies follow the
/// other nodes' writes (see <doc:ManyMachines>).
///
/// The contract:
/// - Every change carries a ``SharedVersion``; the tier keeps the newest one per key and
///   ignores an older one (a write queued during an outage never replaces a newer one).
/// - A removal by prefix or tag covers the entries whose version is not newer than the
///   removal's, and no later one.
/// - ``changes(after:)`` reports every change applied by any node, in the order applied, each
///   with a cursor; given the cursor of the last change a node applied, it resumes after it,
///   or reports ``SharedNotice/historyLost(cursor:)`` when it cannot (the history was trimmed, or the
///   tier restarted empty).
///
/// Implementations are thread-safe, and every method may throw for an outage; the cache
/// bounds each call with ``CacheOptions/sharedTierTimeout`` and never fails a call for it.
public protocol SharedTier: Sendable {
    /// The live entry of `key`, or nil when there is none (absent, removed or expired).
    func entry(forKey key: String) async throws -> SharedEntry?

    /// Applies `change` unless the tier holds a newer version for what it touches.
    func apply(_ change: SharedChange) async throws

    /// The changes applied after `cursor` (all from now when nil), as they are applied. The
    /// stream ends only when the task reading it is cancelled; outages are reported as
    /// ``SharedNotice/historyLost(cursor:)`` once the connection is back.
    func changes(after cursor: String?) -> AsyncStream<SharedNotice>

    /// Claims the load of `key` for at most `lease` (``CacheOptions/sharedTierLoadLease``):
    /// a token when this call got the claim, nil while another node holds it. A claim ends
    /// when its holder releases it or when the lease passes (a holder that died). Tokens only
    /// grow, so a holder whose lease passed cannot release the claim a later holder took.
    ///
    /// The default implementation grants every claim (no coordination: each node loads).
    func claimLoad(of key: String, for lease: Duration) async throws -> UInt64?

    /// Ends the claim of `key` when it is still the one `token` names; does nothing otherwise.
    /// The default implementation does nothing.
    func releaseLoad(of key: String, token: UInt64) async throws
}

extension SharedTier {
    /// Grants every claim with token 1: a tier that does not coordinate loads.
    public func claimLoad(of key: String, for lease: Duration) async throws -> UInt64? { 1 }

    /// Does nothing: a tier that does not coordinate loads.
    public func releaseLoad(of key: String, token: UInt64) async throws {}
}

/// An entry as the shared tier holds it.
public struct SharedEntry: Sendable, Equatable {
    /// The value's encoded bytes (as the cache's coder wrote them).
    public var value: Data
    /// The end of its fresh period (ms since 1970); 0 for a plain value.
    public var freshUntil: Int64
    /// When it expires (ms since 1970; the end of the stale window for a cache entry); 0 = never.
    public var expiry: Int64
    /// The tags it was stored with.
    public var tags: [String]
    /// The version of the write that stored it.
    public var version: SharedVersion

    /// An entry of `value` (encoded bytes) with its times (ms since 1970), tags and version.
    public init(value: Data, freshUntil: Int64, expiry: Int64, tags: [String], version: SharedVersion) {
        self.value = value
        self.freshUntil = freshUntil
        self.expiry = expiry
        self.tags = tags
        self.version = version
    }
}

/// A write or removal, as nodes send it to the shared tier and the tier reports it back.
public enum SharedChange: Sendable, Equatable {
    /// `key` now holds `entry`.
    case set(key: String, entry: SharedEntry)
    /// `key` was removed.
    case remove(key: String, version: SharedVersion)
    /// Every entry whose key starts with `prefix` and whose version is not newer was removed
    /// (the empty prefix: all of them).
    case removePrefix(String, version: SharedVersion)
    /// Every entry tagged `tag` whose version is not newer was removed.
    case removeTag(String, version: SharedVersion)

    /// The change's version.
    public var version: SharedVersion {
        switch self {
        case .set(_, let entry): entry.version
        case .remove(_, let v), .removePrefix(_, let v), .removeTag(_, let v): v
        }
    }
}

/// What ``SharedTier/changes(after:)`` reports.
public enum SharedNotice: Sendable, Equatable {
    /// A change any node applied, and the cursor to resume after it.
    case change(SharedChange, cursor: String)
    /// Changes may have been missed (an outage, a trimmed history, a tier restarted empty):
    /// local copies must be revalidated. `cursor` is where the history now resumes.
    case historyLost(cursor: String?)
    /// Caught up: every change made from now on will be reported as it is applied. Sent when
    /// following starts and after every reconnection; the cache reads through the tier only
    /// while it follows (between `live` and ``interrupted``).
    case live(cursor: String?)
    /// Following stopped (the connection was lost): changes may arrive late until the next
    /// ``live(cursor:)``.
    case interrupted
}

/// The order of writes across nodes: a node's clock in microseconds (never going back on one
/// node) and the node's identifier, which orders two writes of the same microsecond.
/// Comparable; its ``description`` is fixed-width hex (16 + 8 digits), so text order is the
/// same order.
public struct SharedVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Microseconds since 1970 on the writing node's clock, made to grow on that node.
    public var microseconds: Int64
    /// The writing node's identifier.
    public var node: UInt32

    /// The version of `node`'s change at `microseconds`.
    public init(microseconds: Int64, node: UInt32) {
        self.microseconds = microseconds
        self.node = node
    }

    /// Parses ``description``; nil for anything else.
    public init?(_ text: some StringProtocol) {
        guard text.utf8.count == 24, let ms = UInt64(text.prefix(16), radix: 16), ms <= UInt64(Int64.max),
              let node = UInt32(text.suffix(8), radix: 16) else { return nil }
        self.init(microseconds: Int64(ms), node: node)
    }

    /// Whether `a` is older: earlier microseconds, or the same and a lower node id.
    public static func < (a: Self, b: Self) -> Bool { (a.microseconds, a.node) < (b.microseconds, b.node) }

    /// 24 lowercase hex digits: 16 of microseconds, 8 of node.
    public var description: String {
        let ms = String(UInt64(max(0, microseconds)), radix: 16)
        let node = String(self.node, radix: 16)
        return String(repeating: "0", count: 16 - ms.count) + ms + String(repeating: "0", count: 8 - node.count) + node
    }
}
