import Foundation
import Synchronization

/// The two-level cache most apps use: an LRU memory cache in front of a persistent ``DiskStore``,
/// for `Codable` values and raw bytes.
///
/// ```swift
/// let cache = try Cache(directory: "/tmp/app-cache")
/// try cache.setValue(user, forKey: "user:42", timeToLive: .seconds(600))
/// let again = try cache.value(User.self, forKey: "user:42")      // memory hit
/// let later = try await cache.value(User.self, forKey: "user:42") // the same, from a task
/// ```
///
/// Reads look in memory, then on disk (decoded and promoted to memory). Writes go to disk first
/// and then to memory (write-through); a failed disk write leaves memory without the key.
/// Every method is thread-safe; the `async` variants run the same work off the caller's
/// executor. A value that cannot be decoded as the asked type throws ``CaskError/coding(key:reason:)``
/// and is removed from both layers.
public final class Cache: Sendable {
    /// The disk layer.
    public let disk: DiskStore
    /// The memory layer (decoded values; cost = encoded bytes).
    public let memory: MemoryCache<any Sendable>
    /// The options the cache was opened with.
    public let options: CacheOptions
    private let counters = Locked<(hits: UInt64, misses: UInt64)>((0, 0))
    #if canImport(Darwin)
    /// The system's memory-pressure source: warnings and critical events empty the memory layer.
    private let pressureSource: any DispatchSourceMemoryPressure
    #endif

    /// Opens (creating when missing) a cache whose disk layer lives in `directory`.
    /// - Throws: what ``DiskStore/init(directory:options:)`` throws.
    public init(directory: String, options: CacheOptions = CacheOptions()) throws(CaskError) {
        self.options = options
        var disk = options.disk
        let handler = options.eventHandler
        if let handler {
            let previous = disk.eventHandler
            disk.eventHandler = { event in
                previous?(event)
                if case .evicted(let key, let cause) = event { handler(.evicted(key: key, layer: .disk, cause: cause.rawValue)) }
            }
        }
        self.disk = try DiskStore(directory: directory, options: disk)
        var onEviction: (@Sendable (String, any Sendable, MemoryCache<any Sendable>.EvictionCause) -> Void)?
        if let handler {
            onEviction = { key, _, cause in handler(.evicted(key: key, layer: .memory, cause: cause.rawValue)) }
        }
        self.memory = MemoryCache<any Sendable>(limits: options.memory, onEviction: onEviction)
        #if canImport(Darwin)
        let source = DispatchSource.makeMemoryPressureSource(eventMask: [.warning, .critical], queue: .global())
        let memory = self.memory
        source.setEventHandler { memory.handleMemoryPressure() }
        source.activate()
        self.pressureSource = source
        #endif
    }

    /// The directory of the shared cache named `name`: `~/.cache/<name>` on Linux (or
    /// `$XDG_CACHE_HOME/<name>`), the user's Caches folder on Apple platforms.
    public static func defaultDirectory(name: String) -> String {
        #if canImport(Darwin)
        let base = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first!.path
        #else
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")
        #endif
        return (base as NSString).appendingPathComponent(name)
    }

    /// The shared default cache (`Cache.defaultDirectory(name: "cask")`), opened on first use.
    /// Nil when it cannot be opened (for example, when another process holds it).
    public static let shared: Cache? = try? Cache(directory: defaultDirectory(name: "cask"))

    private func emit(_ event: CacheEvent) { options.eventHandler?(event) }

    // MARK: Typed values

    /// Stores `value` (encoded with the cache's coder) in both layers.
    /// - Throws: ``CaskError/coding(key:reason:)`` when it cannot be encoded, or what
    ///   ``DiskStore/setValue(_:forKey:timeToLive:isPinned:)`` throws (memory then holds nothing for the key).
    public func setValue<T: Encodable & Sendable>(_ value: T, forKey key: String, timeToLive: Duration? = nil, isPinned: Bool = false) throws {
        let data: Data
        do { data = try options.coder.encode(value) } catch {
            throw CaskError.coding(key: key, reason: "\(error)")
        }
        try store(value, data: data, forKey: key, timeToLive: timeToLive, isPinned: isPinned)
    }

    /// The value for `key` decoded as `T`, or nil when absent or expired.
    /// - Throws: ``CaskError/coding(key:reason:)`` when the stored bytes are not a `T` (the item
    ///   is then removed), or an I/O error.
    public func value<T: Decodable & Sendable>(_ type: T.Type, forKey key: String) throws -> T? {
        if let cached = memory.value(forKey: key), let typed = cached as? T {
            counters.withLock { $0.hits += 1 }
            return typed
        }
        counters.withLock { $0.misses += 1 }
        guard let data = try disk.value(forKey: key) else { return nil }
        do {
            let decoded = try options.coder.decode(T.self, from: data)
            memory.setValue(decoded, forKey: key, cost: data.count)
            return decoded
        } catch {
            _ = try? removeValue(forKey: key)
            throw CaskError.coding(key: key, reason: "\(error)")
        }
    }

    // MARK: Raw bytes

    /// Stores bytes as they are (no coding) in both layers.
    public func setData(_ data: Data, forKey key: String, timeToLive: Duration? = nil, isPinned: Bool = false) throws {
        try store(data, data: data, forKey: key, timeToLive: timeToLive, isPinned: isPinned)
    }

    /// The bytes stored for `key`, or nil.
    public func data(forKey key: String) throws -> Data? {
        if let cached = memory.value(forKey: key) as? Data {
            counters.withLock { $0.hits += 1 }
            return cached
        }
        counters.withLock { $0.misses += 1 }
        guard let data = try disk.value(forKey: key) else { return nil }
        memory.setValue(data, forKey: key, cost: data.count)
        return data
    }

    private func store(_ value: any Sendable, data: Data, forKey key: String, timeToLive: Duration?, isPinned: Bool) throws {
        emit(.willAdd(key: key))
        memory.removeValue(forKey: key)
        try disk.setValue(data, forKey: key, timeToLive: timeToLive, isPinned: isPinned)
        // TTL'd items stay on disk only, where expiry is enforced to the millisecond.
        if timeToLive == nil { memory.setValue(value, forKey: key, cost: data.count) }
        emit(.didAdd(key: key))
    }

    // MARK: Removal and queries

    /// Removes `key` from both layers. Returns true when it was stored.
    @discardableResult
    public func removeValue(forKey key: String) throws -> Bool {
        emit(.willRemove(key: key))
        memory.removeValue(forKey: key)
        let removed = try disk.removeValue(forKey: key)
        emit(.didRemove(key: key))
        return removed
    }

    /// Removes everything from both layers.
    public func removeAll() throws {
        memory.removeAll()
        try disk.removeAll()
        emit(.didRemoveAll)
    }

    /// Whether `key` is stored (memory or disk). Not an access.
    public func contains(_ key: String) -> Bool { memory.contains(key) || disk.contains(key) }

    /// The disk layer's metadata for `key` (sizes, times, TTL left, pinned).
    public func metadata(forKey key: String) -> ItemMetadata? { disk.metadata(forKey: key) }

    /// Both layers' counters.
    public var statistics: CacheStatistics {
        let c = counters.withLock { $0 }
        return CacheStatistics(memoryHits: c.hits, memoryMisses: c.misses, memoryItems: memory.count,
                               memoryCost: memory.totalCost, disk: disk.statistics)
    }

    /// Frees the memory layer (call on memory pressure; the disk layer is untouched).
    public func handleMemoryPressure() { memory.handleMemoryPressure() }

    /// Syncs the disk layer.
    public func sync() throws { try disk.sync() }

    /// Closes the disk layer; the cache cannot be used afterwards.
    public func close() throws {
        #if canImport(Darwin)
        pressureSource.cancel()
        #endif
        memory.removeAll()
        try disk.close()
    }

    // MARK: Async variants

    /// ``setValue(_:forKey:timeToLive:isPinned:)`` off the caller's executor.
    public func setValue<T: Encodable & Sendable>(_ value: T, forKey key: String, timeToLive: Duration? = nil, isPinned: Bool = false) async throws {
        try await Self.offload { try self.setValue(value, forKey: key, timeToLive: timeToLive, isPinned: isPinned) }
    }

    /// ``value(_:forKey:)`` off the caller's executor (a memory hit is answered directly).
    public func value<T: Decodable & Sendable>(_ type: T.Type, forKey key: String) async throws -> T? {
        if let cached = memory.value(forKey: key) as? T {
            counters.withLock { $0.hits += 1 }
            return cached
        }
        return try await Self.offload { try self.value(type, forKey: key) }
    }

    /// ``setData(_:forKey:timeToLive:isPinned:)`` off the caller's executor.
    public func setData(_ data: Data, forKey key: String, timeToLive: Duration? = nil, isPinned: Bool = false) async throws {
        try await Self.offload { try self.setData(data, forKey: key, timeToLive: timeToLive, isPinned: isPinned) }
    }

    /// ``data(forKey:)`` off the caller's executor.
    public func data(forKey key: String) async throws -> Data? {
        try await Self.offload { try self.data(forKey: key) }
    }

    /// ``removeValue(forKey:)`` off the caller's executor.
    @discardableResult
    public func removeValue(forKey key: String) async throws -> Bool {
        try await Self.offload { try self.removeValue(forKey: key) }
    }

    /// ``removeAll()`` off the caller's executor.
    public func removeAll() async throws {
        try await Self.offload { try self.removeAll() }
    }

    /// Runs blocking disk work on a Dispatch queue, not on Swift's cooperative pool.
    private static func offload<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }
}
