import Cask
import Foundation
import Hummingbird
import ServiceLifecycle

/// A Hummingbird `PersistDriver` backed by a ``Cask/CaskCache``: sessions, rate limits and
/// idempotency keys that survive a restart of the app, with no server to run.
///
/// Replaces `MemoryPersistDriver()` in one line: `try CaskPersistDriver(directory:)`, passed to
/// the `Application`'s services (the package's README.md shows a whole app, which its tests
/// compile and run).
///
/// Behaves as Hummingbird's `MemoryPersistDriver` documents: ``create(key:value:expires:)``
/// throws `PersistError.duplicate` when the key holds a value; ``set(key:value:expires:)``
/// without an expiry keeps the expiry the key already had; ``get(key:as:)`` answers nil once the
/// value expired and throws `PersistError.invalidConversion` when the stored value cannot be
/// read as the asked type. A `Data` is stored as its raw bytes and any other value with the
/// cache's coder (JSON by default), each with a marker of its kind: raw bytes read as a
/// `Codable` type, or an encoded value (a `ByteBuffer` too) read as `Data`, throw
/// `invalidConversion`, as with the memory driver. Within the encoded kind a value reads back as
/// any type whose `Codable` form matches (the memory driver compares Swift types instead).
/// Values stored by earlier versions of the driver, which wrote no marker, read as they did.
/// Read the driver's keys through the driver: through ``cache`` their bytes start with the
/// 8-byte marker.
///
/// Expiry is kept in milliseconds, on the store's clock. As a `Service` it waits for the
/// graceful shutdown of its `ServiceGroup` and then closes the store (syncing it and writing the
/// index snapshot), so the next start opens fast. Thread-safe: every call may come from any task;
/// the disk work runs off Swift's cooperative pool. The store's folder is open in one process at
/// a time: a second app on the same folder fails at start with `CaskError.storeLocked`.
public struct CaskPersistDriver: PersistDriver {
    /// The cache the values live in; usable directly for everything else Cask offers.
    public let cache: CaskCache
    /// Serialises ``create(key:value:expires:)`` with the other writes of this driver, so that
    /// of two creates of one key exactly one succeeds.
    private let writes = WriteLock()

    /// Opens (creating when missing) the store in `directory`.
    /// - Throws: what ``Cask/CaskCache/init(directory:options:)`` throws, for example
    ///   `CaskError.storeLocked` when another process has the folder open.
    public init(directory: String, options: CacheOptions = CacheOptions()) throws {
        self.cache = try CaskCache(directory: directory, options: options)
    }

    /// Uses an open cache (the driver closes it at shutdown).
    public init(cache: CaskCache) {
        self.cache = cache
    }

    public func create<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?) async throws {
        let bytes = try StoredValue.bytes(of: value, forKey: key, coder: cache.options.coder)
        try await writes.run {
            guard try cache.metadata(forKey: key) == nil else { throw PersistError.duplicate }
            try cache.setData(bytes, forKey: key, timeToLive: Self.timeToLive(expires))
        }
    }

    public func set<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?) async throws {
        let bytes = try StoredValue.bytes(of: value, forKey: key, coder: cache.options.coder)
        try await writes.run {
            var ttl = Self.timeToLive(expires)
            if expires == nil, let left = try Self.timeLeft(of: cache.metadata(forKey: key)) {
                // The memory driver keeps an existing expiry when none is given.
                ttl = max(left, .milliseconds(1))
            }
            try cache.setData(bytes, forKey: key, timeToLive: ttl)
        }
    }

    public func get<Object: Codable & Sendable>(key: String, as type: Object.Type) async throws -> Object? {
        guard let stored = try await cache.data(forKey: key) else { return nil }
        return try StoredValue.value(type, from: stored, coder: cache.options.coder)
    }

    public func getWithTTL<Object: Codable & Sendable>(key: String, as type: Object.Type) async throws -> (object: Object, ttl: Duration?)? {
        let metadata = try await cache.metadata(forKey: key)
        guard let object = try await get(key: key, as: type) else { return nil }
        return (object, Self.timeLeft(of: metadata))
    }

    public func remove(key: String) async throws {
        try await writes.run { _ = try cache.removeValue(forKey: key) }
    }

    /// Waits for the graceful shutdown of the service group, then closes the store.
    public func run() async throws {
        try? await gracefulShutdown()   // a cancellation ends the wait as a shutdown does
        try await shutdown()
    }

    /// Closes the store: syncs it and writes the index snapshot. Later calls throw
    /// `CaskError.closed`.
    public func shutdown() async throws {
        try await cache.close()
    }

    /// A Hummingbird expiry as a Cask time to live (at least 1 ms: Cask refuses less).
    static func timeToLive(_ expires: Duration?) -> Duration? {
        expires.map { max($0, .milliseconds(1)) }
    }

    /// The time `metadata`'s item has left before it expires; nil without an expiry.
    static func timeLeft(of metadata: ItemMetadata?) -> Duration? {
        guard let expiry = metadata?.expirationDate else { return nil }
        return .milliseconds(Int64((expiry.timeIntervalSinceNow * 1000).rounded(.down)))
    }
}
