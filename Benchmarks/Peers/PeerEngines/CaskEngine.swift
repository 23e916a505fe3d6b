import Cask
import Foundation

/// Cask's disk store (`DiskStore`, memory layer off), as an application embeds it.
///
/// Durability `.none` (the OS writes the 1 MiB write buffer back), `.everyWrite` (fdatasync per
/// put), or `sync()` after every 1,000th write. LZ4 `automatic` (values of 512 bytes and more,
/// kept when it saves at least 1/16). Default 64 MiB segments. With a byte limit it is a cache:
/// least recently used items are evicted and compaction keeps disk use near the limit.
public final class CaskEngine: Engine {
    public static let name = "cask"
    public static let configurationNote =
        "DiskStore, memory layer off; durability none / everyWrite / sync() every 1,000; LZ4 automatic (>= 512 B); 64 MiB segments; in the overwrite phase a byte limit (64 MiB per million keys) with 8 segments to the limit"

    let store: DiskStore
    let configuration: EngineConfiguration

    public init(directory: String, configuration: EngineConfiguration) throws {
        var options = StoreOptions()
        options.durability = configuration.sync == .everyWrite ? .everyWrite : .none
        options.logger.logLevel = .warning
        if let limit = configuration.byteLimit {
            // A cache: 8 segments to the limit (compaction works segment by segment).
            options.limits.byteLimit = Int(limit)
            options.segmentSize = Int(min(Int64(64 << 20), max(4096, limit / 8)))
        }
        self.configuration = configuration
        store = try DiskStore(directory: directory, options: options)
    }

    /// The store's own statistics (for write amplification by its own count).
    public var statistics: StoreStatistics { store.statistics }

    public func makeSession() throws -> any EngineSession {
        // DiskStore is thread-safe; a session needs its own write counter only.
        CaskSession(store: store, configuration: configuration)
    }

    public func close() throws { try store.close() }
}

final class CaskSession: EngineSession {
    let store: DiskStore
    /// `.every1000` only: the store itself syncs every write in `.everyWrite` mode.
    var cadence: SyncCadence

    init(store: DiskStore, configuration: EngineConfiguration) {
        self.store = store
        cadence = SyncCadence(configuration.sync == .every1000 ? .every1000 : .none)
    }

    func put(_ key: String, _ value: UnsafeRawBufferPointer) throws {
        try store.setValue(value, forKey: key)
        if cadence.next() { try store.sync() }
    }

    func get(_ key: String, into buffer: inout [UInt8]) throws -> Bool {
        // The borrowing read: the value is copied once, from the mapped segment into `buffer`.
        let found = try store.withValue(forKey: key) { value in
            buffer.removeAll(keepingCapacity: true)
            buffer.append(contentsOf: value)
        }
        return found != nil
    }

    func delete(_ key: String) throws {
        try store.removeValue(forKey: key)
        if cadence.next() { try store.sync() }
    }

    func flush() throws { if cadence.mode == .every1000 { try store.sync() } }
}
