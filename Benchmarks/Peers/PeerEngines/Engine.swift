/// The one interface every store in the side-by-side benchmark is driven through, so that a
/// workload is defined once and run unchanged against Cask and each peer.
///
/// An engine is opened on a directory it owns. Work is done through sessions: one per thread
/// (SQLite wants a connection per thread, LMDB a read transaction per thread); engines whose
/// handle is thread-safe hand out cheap sessions over the shared handle.

/// When writes are made durable.
public enum SyncMode: String, Sendable, CaseIterable {
    /// Never synced by the workload (what each engine does on close still applies).
    case none
    /// Every write is durable before it returns.
    case everyWrite = "every-write"
    /// Every 1,000th write syncs, making it and all earlier writes durable.
    case every1000 = "every-1000"
}

/// Counts one session's writes and says which must sync (every one, every 1,000th, none).
struct SyncCadence {
    let mode: SyncMode
    private var writes = 0
    init(_ mode: SyncMode) { self.mode = mode }

    /// Counts a write; true when it must be durable before it returns.
    @inline(__always)
    mutating func next() -> Bool {
        writes += 1
        switch mode {
        case .none: return false
        case .everyWrite: return true
        case .every1000: return writes % 1000 == 0
        }
    }
}

/// What a workload asks of an engine.
public struct EngineConfiguration: Sendable {
    /// See ``SyncMode``.
    public var sync: SyncMode = .none
    /// Writes grouped per transaction by the engines that have transactions (SQLite, LMDB) when
    /// `sync` is `.none`: 1,000 for fills (what their documentation recommends for bulk
    /// loading), 1 where two threads write at once.
    public var writesPerTransaction = 1000
    /// Cask only: the cache's byte limit (the peers have none; they grow).
    public var byteLimit: Int64?

    public init(sync: SyncMode = .none, writesPerTransaction: Int = 1000, byteLimit: Int64? = nil) {
        self.sync = sync
        self.writesPerTransaction = writesPerTransaction
        self.byteLimit = byteLimit
    }

    /// Writes per commit actually used: 1 when every write must be durable, 1,000 when every
    /// 1,000th must, else `writesPerTransaction`.
    public var batch: Int {
        switch sync {
        case .everyWrite: 1
        case .every1000: 1000
        case .none: max(1, writesPerTransaction)
        }
    }
}

/// An error from a peer's C API, with its message.
public struct EngineError: Error, CustomStringConvertible {
    public var engine: String
    public var message: String
    public init(_ engine: String, _ message: String) { self.engine = engine; self.message = message }
    public var description: String { "\(engine): \(message)" }
}

/// A store under test. Not thread-safe itself: open, close and `makeSession` from one thread.
public protocol Engine: AnyObject {
    /// Short name used in reports ("cask", "leveldb", ...).
    static var name: String { get }
    /// The configuration in words, for the report.
    static var configurationNote: String { get }
    /// Opens (creating when missing) the store in `directory`.
    init(directory: String, configuration: EngineConfiguration) throws
    /// A handle for one thread's operations.
    func makeSession() throws -> any EngineSession
    /// Flushes and closes; the directory then holds the complete store.
    func close() throws
}

/// One thread's view of an engine. Use each session from one thread at a time.
public protocol EngineSession: AnyObject {
    /// Stores `value` under `key`.
    func put(_ key: String, _ value: UnsafeRawBufferPointer) throws
    /// Copies the value of `key` into `buffer` (resized to fit); false when absent.
    func get(_ key: String, into buffer: inout [UInt8]) throws -> Bool
    /// Removes `key` (absent keys are not an error).
    func delete(_ key: String) throws
    /// Commits an open batch (durably when the sync mode asks for it). Called at the end of
    /// each phase.
    func flush() throws
}

extension String {
    /// The key's UTF-8 bytes without copying (native strings are contiguous).
    @inlinable
    func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let r = try utf8.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) { return r }
        var copy = self
        return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}

/// Every engine, in report order.
public let allEngines: [any Engine.Type] = [
    CaskEngine.self, AppendLogEngine.self, LevelDBEngine.self, RocksDBEngine.self, LMDBEngine.self, SQLiteEngine.self,
]

/// Looks an engine up by its `name`.
public func engine(named name: String) -> (any Engine.Type)? { allEngines.first { $0.name == name } }
