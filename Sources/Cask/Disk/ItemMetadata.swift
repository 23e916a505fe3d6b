import Foundation

/// What the store knows of an item, read from the index without touching its value.
public struct ItemMetadata: Sendable, Equatable {
    /// The item's key.
    public var key: String
    /// The value's size in bytes, as given to the store.
    public var size: Int
    /// The value's size on disk in bytes (smaller than `size` when compressed).
    public var storedSize: Int
    /// Whether the value is stored LZ4-compressed.
    public var isCompressed: Bool
    /// When the value was written.
    public var writeDate: Date
    /// When the value was last read or written.
    public var accessDate: Date
    /// When the value expires (its time-to-live ends), or nil when it never does.
    public var expirationDate: Date?
    /// Whether the item is pinned: exempt from TTL, age limit, and evicted only after unpinned items.
    public var isPinned: Bool
    /// Whether the item is a cache entry with a stale window (written by
    /// ``CaskCache/loadedValue(forKey:as:options:loader:)``): `expirationDate` is then the end
    /// of its stale window, and its fresh period ended earlier (see <doc:LoadingValues>).
    public var hasStaleWindow: Bool = false
    /// The tags the item was stored with (``CacheEntryOptions/tags``; in the order its entry
    /// header lists them: sorted by their bytes), empty for every other item.
    public var tags: [String] = []

    /// Seconds of life left at `now`, or nil when the item never expires.
    public func timeToLive(at now: Date = Date()) -> TimeInterval? {
        expirationDate.map { max(0, $0.timeIntervalSince(now)) }
    }
}

extension Date {
    init(milliseconds: Int64) { self.init(timeIntervalSince1970: Double(milliseconds) / 1000) }
    var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }
}
