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
    /// The segment size the harness had to set because the library refused `byteLimit` alone;
    /// nil when the store runs with the default segment size.
    public let segmentSizeWorkaround: Int?

    public init(directory: String, configuration: EngineConfiguration) throws {
        let limit = configuration.byteLimit ?? Self.defaultByteLimit
        var options = StoreOptions()
        options.durability = .none
        options.logger.logLevel = .warning
        options.limits.byteLimit = Int(limit)
        (store, segmentSizeWorkaround) = try Self.open(directory, options)
        self.configuration = configuration
        byteLimit = limit
    }

    /// Opens the store with `options`; when the library refuses the byte limit alone, opens it
    /// again with a segment size to suit the limit and returns that size too.
    static func open(_ directory: String, _ options: StoreOptions) throws -> (DiskStore, Int?) {
        do {
            return (try DiskStore(directory: directory, options: options), nil)
        } catch {
            guard case .invalidOption = error else { throw error }
        }
        // WORKAROUND (issue 26): the library currently requires byteLimit >= 4 segments, and
        // the default segment is 64 MiB, so byteLimit alone below 256 MiB is refused. Until
        // the library derives the segment size from the limit, use 8 segments to the limit
        // (12 MiB for 96 MiB). Once byteLimit alone is accepted, the first open succeeds and
        // this path is dead: remove it then.
        var adjusted = options
        let segment = max(4096, (adjusted.limits.byteLimit ?? 0) / 8)
        adjusted.segmentSize = segment
        return (try DiskStore(directory: directory, options: adjusted), segment)
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
