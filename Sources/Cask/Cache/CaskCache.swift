import Foundation
import Synchronization
import CaskFormat

/// The two-level cache most apps use: an LRU memory cache in front of a persistent ``DiskStore``,
/// for `Codable` values and raw bytes.
///
/// ```swift
/// let cache = try CaskCache(directory: "/tmp/app-cache")
/// try cache.setValue(user, forKey: "user:42", timeToLive: .seconds(600))
/// let again = try cache.value(User.self, forKey: "user:42")      // memory hit
/// let later = try await cache.value(User.self, forKey: "user:42") // the same, from a task
/// ```
///
/// **The disk layer decides what exists.** Writes go to disk first and then to memory
/// (write-through; a failed disk write leaves memory without the key). Reads look in memory,
/// then on disk (decoded and promoted to memory). A memory hit is answered only while the disk
/// layer still holds that very record live, and counts as a use there too (LRU order, age
/// limit): so an item that expired (TTL), aged out, was evicted by a disk limit or was changed
/// through ``disk`` is never answered from memory. The memory layer's own limits only decide
/// which decoded values stay in memory. A hit does not wait for the disk layer's lock: the
/// disk layer records which records go, and the cache drops their copies before its next
/// lookup; it hands its hits to the disk layer before any call of its own that decides by
/// access time, and within 10 ms otherwise (so the disk layer's background eviction and age
/// limit count a memory hit from then on). Calls that overlap in time are ordered as they take
/// the locks: a hit that runs while another thread's write evicts the key may answer the value
/// it had; a read that starts after a write returned never answers an older value.
///
/// `Data` values are stored as their raw bytes, whichever method stores or reads them. A value
/// that cannot be decoded as the asked type throws ``CaskError/typeMismatch(key:type:reason:)``
/// and is kept (the disk layer checksums every record, so this is never damage).
/// Every method is thread-safe; the `async` variants run the same work off the caller's executor.
public final class CaskCache: Sendable {
    /// The disk layer.
    public let disk: DiskStore
    /// The memory layer: decoded values, each with the disk record it came from; cost = encoded bytes.
    @usableFromInline let memory: MemoryCache<MemoryItem>
    /// The rules that keep the memory layer's copies true to the disk layer.
    @usableFromInline let copies: MemoryCopies
    /// The options the cache was opened with.
    public let options: CacheOptions
    /// Memory hits the disk layer confirmed, and misses (relaxed atomics: counters, not a lock
    /// on the hit path). Hits answered from memory alone are counted by the memory shards.
    @usableFromInline let hits = Atomic<Int>(0)
    let misses = Atomic<Int>(0)
    /// The loader API's running loads, throttles and statistics.
    let loads = LoadCoordinator()
    /// The link to ``CacheOptions/sharedTier``, when there is one.
    let shared: SharedTierLink?
    #if canImport(Darwin)
    /// The system's memory-pressure source: warnings and critical events empty the memory layer.
    private let pressureSource: any DispatchSourceMemoryPressure
    #endif

    /// Whether memory hits are answered without asking the disk layer (every disk layer but a
    /// read-only one, which another process changes): see ``memoryHit(forKey:)``.
    @usableFromInline let tracksUses: Bool
    /// The disk layer's age limit in milliseconds; 0 = none.
    @usableFromInline let diskAgeLimit: Int64

    /// A decoded value (boxed, so that copying an item copies a reference, and reading it back
    /// is one class check), the sequence number of the disk record it was decoded from, that
    /// record's expiry (milliseconds since 1970, 0 = none; never later than the record's own),
    /// and for a cache entry the end of its fresh period (ms since 1970; 0 for a plain value).
    @usableFromInline
    struct MemoryItem: Sendable {
        @usableFromInline let box: any AnyObject & Sendable
        @usableFromInline let sequence: UInt64
        @usableFromInline let expiry: Int64
        @usableFromInline let freshUntil: Int64

        init<T: Sendable>(value: T, sequence: UInt64, expiry: Int64, freshUntil: Int64 = 0) {
            self.box = ValueBox(value)
            self.sequence = sequence
            self.expiry = expiry
            self.freshUntil = freshUntil
        }

        /// The value when it is a `T`: one comparison of the box's class with `ValueBox<T>`
        /// (final, so the same answer as a dynamic cast, without the runtime's cast).
        @inlinable
        func value<T: Sendable>(as type: T.Type) -> T? {
            guard ObjectIdentifier(Swift.type(of: box)) == ObjectIdentifier(ValueBox<T>.self) else { return nil }
            return unsafeDowncast(box, to: ValueBox<T>.self).value
        }

        /// Whether this copy answers a read at `now` without the disk layer: the cache tracks
        /// uses (`tracksUses`), the record's expiry has not come, and the item's last use
        /// (`previousUse`, ms) lies within the disk layer's age limit (`ageLimit` ms, 0 = none).
        @inlinable @inline(__always)
        func answersAlone(now: Int64, previousUse: Int64, tracksUses: Bool, ageLimit: Int64) -> Bool {
            tracksUses && (expiry == 0 || now < expiry) && (ageLimit == 0 || now - previousUse <= ageLimit)
        }
    }

    /// One value of the memory layer.
    @usableFromInline
    final class ValueBox<T: Sendable>: Sendable {
        @usableFromInline let value: T
        init(_ value: T) { self.value = value }
    }

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
                if case .evicted(let key, let cause) = event { handler(.evicted(key: key, layer: .disk, cause: cause)) }
            }
        }
        self.disk = try DiskStore(directory: directory, options: disk)
        var onEviction: (@Sendable (String, MemoryItem, EvictionCause) -> Void)?
        if let handler {
            onEviction = { key, _, cause in handler(.evicted(key: key, layer: .memory, cause: cause)) }
        }
        let m = options.memory
        self.tracksUses = !options.disk.isReadOnly
        self.diskAgeLimit = options.disk.limits.ageLimit.map { max(1, $0.milliseconds) } ?? 0
        self.memory = MemoryCache<MemoryItem>(
            limits: .init(countLimit: m.countLimit, costLimit: m.costLimit, ageLimit: m.ageLimit, autoTrimInterval: m.autoTrimInterval),
            clock: options.disk.clock, tracksUses: tracksUses, onEviction: onEviction)
        self.copies = MemoryCopies(memory: memory, tier: self.disk, tracksChanges: tracksUses)
        self.shared = try options.sharedTier.map { tier throws(CaskError) in try SharedTierLink(tier: tier, options: options, directory: directory) }
        #if canImport(Darwin)
        let source = DispatchSource.makeMemoryPressureSource(eventMask: [.warning, .critical], queue: .global())
        let memory = self.memory
        source.setEventHandler { memory.handleMemoryPressure() }
        source.activate()
        self.pressureSource = source
        #endif
        try startSharedTier()
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

    /// The shared default cache (`CaskCache.defaultDirectory(name: "cask")`), opened on first use.
    /// Nil when it cannot be opened (for example, when another process holds it);
    /// ``openShared()`` says why.
    // `try?`: documented as nil on failure, with the reason kept by `openShared()`.
    public static var shared: CaskCache? { try? sharedOpening.get() }

    /// The shared default cache (see ``shared``), or the error that kept it from opening. It is
    /// opened once, on first use: every call answers the same instance or the same error.
    public static func openShared() throws(CaskError) -> CaskCache { try sharedOpening.get() }

    private static let sharedOpening = Result { () throws(CaskError) in
        try CaskCache(directory: defaultDirectory(name: "cask"))
    }

    func emit(_ event: CacheEvent) { options.eventHandler?(event) }

    // MARK: Typed values

    /// Stores `value` in both layers: encoded with the cache's coder, or as its raw bytes when
    /// it is `Data`.
    /// - Throws: ``CaskError/coding(key:reason:)`` when it cannot be encoded, or what
    ///   ``DiskStore/setValue(_:forKey:timeToLive:isPinned:)`` throws (the key then keeps its
    ///   previous value on disk, and memory holds nothing for it).
    public func setValue<T: Encodable & Sendable>(_ value: T, forKey key: String, timeToLive: Duration? = nil, isPinned: Bool = false) throws(CaskError) {
        if let bytes = value as? Data {
            try writeThrough(bytes, data: bytes, forKey: key, as: .plain(timeToLive: timeToLive, isPinned: isPinned))
            return
        }
        try writeThrough(value, data: try encode(value, forKey: key), forKey: key, as: .plain(timeToLive: timeToLive, isPinned: isPinned))
    }

    /// The value for `key` decoded as `T` (the raw bytes when `T` is `Data`), or nil when absent,
    /// expired or evicted.
    /// - Throws: ``CaskError/typeMismatch(key:type:reason:)`` when the stored bytes are not a
    ///   `T` (the item is kept), or what ``DiskStore/value(forKey:)`` throws.
    @inlinable
    public func value<T: Decodable & Sendable>(_ type: T.Type, forKey key: String) throws(CaskError) -> T? {
        // Inlinable, so that a memory hit is specialised for `T` in the caller's module.
        if T.self != Data.self, let typed: T = try memoryHit(forKey: key) { return typed }
        return try valueFromDisk(type, forKey: key)
    }

    /// ``value(_:forKey:)`` past the memory layer: `Data` values, and the other types' misses.
    @usableFromInline
    func valueFromDisk<T: Decodable & Sendable>(_ type: T.Type, forKey key: String) throws(CaskError) -> T? {
        if T.self == Data.self { return try data(forKey: key) as? T }
        guard let found = try diskRecord(forKey: key), found.isFresh else { return nil }
        let decoded: T = try decode(found.data, forKey: key)
        remember(decoded, found, forKey: key)
        return decoded
    }

    /// `data` decoded as a `T` by the cache's coder.
    /// - Throws: ``CaskError/typeMismatch(key:type:reason:)`` when the bytes are not a `T`.
    func decode<T: Decodable & Sendable>(_ data: Data, forKey key: String) throws(CaskError) -> T {
        do { return try options.coder.decode(T.self, from: data) } catch {
            throw CaskError.typeMismatch(key: key, type: "\(T.self)", reason: "\(error)")
        }
    }

    // MARK: Raw bytes

    /// Stores bytes as they are (no coding) in both layers.
    /// - Throws: what ``DiskStore/setValue(_:forKey:timeToLive:isPinned:)`` throws.
    public func setData(_ data: Data, forKey key: String, timeToLive: Duration? = nil, isPinned: Bool = false) throws(CaskError) {
        try writeThrough(data, data: data, forKey: key, as: .plain(timeToLive: timeToLive, isPinned: isPinned))
    }

    /// The bytes stored for `key` (a `Codable` value's encoded form), or nil.
    /// - Throws: what ``DiskStore/value(forKey:)`` throws.
    public func data(forKey key: String) throws(CaskError) -> Data? {
        if let cached: Data = try memoryHit(forKey: key) { return cached }
        guard let found = try diskRecord(forKey: key), found.isFresh else { return nil }
        remember(found.data, found, forKey: key)
        return found.data
    }

    /// Pins or unpins `key` (see ``DiskStore/setPinned(_:forKey:)``). Returns false when absent.
    @discardableResult
    public func setPinned(_ pinned: Bool, forKey key: String) throws(CaskError) -> Bool {
        copies.flushUses()
        return try disk.setPinned(pinned, forKey: key)
    }

    // MARK: Removal and queries

    /// Removes `key` from both layers. Returns true when it was stored.
    @discardableResult
    public func removeValue(forKey key: String) throws(CaskError) -> Bool {
        emit(.willRemove(key: key))
        memory.removeValue(forKey: key)
        let removed = try disk.removeValue(forKey: key)
        if let shared { try shared.send(.remove(key: key, version: shared.nextVersion())) }
        emit(.didRemove(key: key))
        return removed
    }

    /// Removes everything from both layers, pinned items included (``removeAll(pinned:)``
    /// removes only the pinned or only the unpinned ones).
    public func removeAll() throws(CaskError) {
        memory.removeAll()
        try disk.removeAll()
        copies.catchUp()
        if let shared { try shared.send(.removePrefix("", version: shared.nextVersion())) }
        emit(.didRemoveAll)
    }

    /// Whether `key` holds a live value (the disk layer decides). Not an access.
    public func contains(_ key: String) -> Bool { disk.contains(key) }

    /// The disk layer's metadata for `key` (sizes, times, TTL left, pinned): see
    /// ``DiskStore/metadata(forKey:)``.
    /// - Throws: ``CaskError/io(operation:path:errno:)`` when reading the record's header fails,
    ///   ``CaskError/closed``.
    public func metadata(forKey key: String) throws(CaskError) -> ItemMetadata? {
        copies.flushUses()
        return try disk.metadata(forKey: key)
    }

    /// Both layers' counters.
    public var statistics: CacheStatistics {
        copies.catchUp()
        return CacheStatistics(memoryHits: hits.load(ordering: .relaxed) + memory.recordedUseCount,
                        memoryMisses: misses.load(ordering: .relaxed), memoryItems: memory.count,
                        memoryCost: memory.totalCost, disk: disk.statistics)
    }

    /// Frees the memory layer (call on memory pressure; the disk layer is untouched).
    public func handleMemoryPressure() { memory.handleMemoryPressure() }

    /// Syncs the disk layer.
    public func sync() throws(CaskError) { try disk.sync() }

    /// For a cache whose disk layer is read-only (`options.disk.isReadOnly`): reloads the disk
    /// layer to see what the writing process has synced since (``DiskStore/refresh()``). Memory
    /// hits stay correct: an item in memory is answered only while the disk still holds the very
    /// record it came from. Does nothing for a cache open for writing.
    public func refresh() throws(CaskError) { try disk.refresh() }

    /// Closes the disk layer; the cache cannot be used afterwards.
    public func close() throws(CaskError) {
        #if canImport(Darwin)
        pressureSource.cancel()
        #endif
        try shared?.close()
        copies.flushUses()
        memory.removeAll()
        try disk.close()
    }

    // MARK: Async variants

    /// ``setValue(_:forKey:timeToLive:isPinned:)`` off the caller's executor.
    public func setValue<T: Encodable & Sendable>(_ value: T, forKey key: String, timeToLive: Duration? = nil, isPinned: Bool = false) async throws(CaskError) {
        try await Self.offload { () throws(CaskError) in try self.setValue(value, forKey: key, timeToLive: timeToLive, isPinned: isPinned) }
    }

    /// ``value(_:forKey:)`` off the caller's executor (a memory hit is answered directly).
    @inlinable   // as the synchronous one: a memory hit specialised for `T` in the caller's module
    public func value<T: Decodable & Sendable>(_ type: T.Type, forKey key: String) async throws(CaskError) -> T? {
        if T.self != Data.self, let cached: T = try memoryHit(forKey: key) { return cached }
        return try await valueThroughTiers(type, forKey: key)
    }

    /// ``setData(_:forKey:timeToLive:isPinned:)`` off the caller's executor.
    public func setData(_ data: Data, forKey key: String, timeToLive: Duration? = nil, isPinned: Bool = false) async throws(CaskError) {
        try await Self.offload { () throws(CaskError) in try self.setData(data, forKey: key, timeToLive: timeToLive, isPinned: isPinned) }
    }

    /// ``data(forKey:)`` off the caller's executor.
    public func data(forKey key: String) async throws(CaskError) -> Data? {
        try await valueThroughTiers(Data.self, forKey: key)
    }

    /// ``removeValue(forKey:)`` off the caller's executor.
    @discardableResult
    public func removeValue(forKey key: String) async throws(CaskError) -> Bool {
        try await Self.offload { () throws(CaskError) in try self.removeValue(forKey: key) }
    }

    /// ``removeAll()`` off the caller's executor.
    public func removeAll() async throws(CaskError) {
        try await Self.offload { () throws(CaskError) in try self.removeAll() }
    }

    /// Runs blocking disk work on a Dispatch queue, not on Swift's cooperative pool.
    @usableFromInline
    static func offload<R: Sendable>(_ body: @escaping @Sendable () throws(CaskError) -> R) async throws(CaskError) -> R {
        let result: Result<R, CaskError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { () throws(CaskError) in try body() })
            }
        }
        return try result.get()
    }
}
