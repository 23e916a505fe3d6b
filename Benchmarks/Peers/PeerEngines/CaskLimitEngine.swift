import Cask

/// Cask's disk store as a new user configures a size-bounded cache: every default, durability
/// `.none`, and only `limits.byteLimit` set (96 MiB unless the configuration names another
/// limit). Unlike ``CaskEngine`` it does not pick a segment size to suit the limit.
///
/// Used by the `churn` workload of `cask-versus`; not in ``allEngines``.
public final class CaskLimitEngine: Engine {
    public static let name = "cask-limit"
    public static let defaultByteLimit: Int64 = 96 << 20
    public static var configurationNote: String {
        "DiskStore, memory layer off, durability none, every default except limits.byteLimit (96 MiB by default)"
    }

    let store: DiskStore
    let configuration: EngineConfiguration
    /// The byte limit the store runs with.
    public let byteLimit: Int64

    public init(directory: String, configuration: EngineConfiguration) throws {
        let limit = configuration.byteLimit ?? Self.defaultByteLimit
        var options = StoreOptions()
        options.durability = .none
        options.logger.logLevel = .warning
        options.limits.byteLimit = Int(limit)
        store = try DiskStore(directory: directory, options: options)
        self.configuration = configuration
        byteLimit = limit
    }

    /// The store's own statistics (bytes written by puts and by compaction).
    public var statistics: StoreStatistics { store.statistics }

    public func makeSession() throws -> any EngineSession {
        CaskSession(store: store, configuration: configuration)
    }

    public func close() throws { try store.close() }
}

/// An engine that can say how many bytes it wrote itself, by its own count.
public protocol CountsOwnWrites: AnyObject {
    /// Bytes of records written by puts and removes.
    var ownBytesWritten: Int64 { get }
    /// Bytes written by compaction (its output segments), on top of ``ownBytesWritten``.
    var ownCompactionBytesWritten: Int64 { get }
}

extension CaskEngine: CountsOwnWrites {
    public var ownBytesWritten: Int64 { Int64(statistics.bytesWritten) }
    public var ownCompactionBytesWritten: Int64 { Int64(statistics.compactionBytesWritten) }
}

extension CaskLimitEngine: CountsOwnWrites {
    public var ownBytesWritten: Int64 { Int64(statistics.bytesWritten) }
    public var ownCompactionBytesWritten: Int64 { Int64(statistics.compactionBytesWritten) }
}

/// The engines of the `churn` workload, in report order: Cask without a limit, Cask with only a
/// byte limit, the buffered-append floor, then the peers.
public var churnEngines: [any Engine.Type] {
    [CaskEngine.self, CaskLimitEngine.self, AppendLogEngine.self, RocksDBEngine.self, LevelDBEngine.self, LMDBEngine.self]
}

/// Looks a churn engine up by its `name`.
public func churnEngine(named name: String) -> (any Engine.Type)? { churnEngines.first { $0.name == name } }
