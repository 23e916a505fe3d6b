import CLMDB
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// LMDB through `lmdb.h` (Debian liblmdb-dev): one environment with a 16 GiB map, the unnamed
/// database. As its documentation advises for bulk writes, writes are grouped 1,000 per write
/// transaction, with `MDB_NOSYNC` when the workload does not sync; in the durable modes the
/// environment syncs on every commit (a commit per write, or per 1,000 writes). Each get runs in
/// the session's read-only transaction, renewed and reset around it (`mdb_txn_renew` /
/// `mdb_txn_reset`, the cheap way to take a fresh snapshot).
public final class LMDBEngine: Engine, @unchecked Sendable {
    public static let name = "lmdb"
    public static let configurationNote =
        "16 GiB map, MDB_NOTLS; 1,000 writes per transaction with MDB_NOSYNC (sync none) / 1 (every write) / 1,000 (every 1,000) with sync on commit; one write transaction per write when 2 threads write; gets in a renewed read-only transaction"

    let env: OpaquePointer
    var dbi: MDB_dbi = 0
    let configuration: EngineConfiguration

    public init(directory: String, configuration: EngineConfiguration) throws {
        var handle: OpaquePointer?
        try Self.check(mdb_env_create(&handle))
        env = handle!
        self.configuration = configuration
        try Self.check(mdb_env_set_mapsize(env, 16 << 30))
        // MDB_NOTLS: a session's read transaction may be used from the thread that runs it,
        // not only the one that created it.
        var flags = UInt32(MDB_NOTLS)
        if configuration.sync == .none { flags |= UInt32(MDB_NOSYNC) }
        mkdir(directory, 0o755)
        try Self.check(mdb_env_open(env, directory, flags, 0o644))
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, 0, &txn))
        try Self.check(mdb_dbi_open(txn, nil, 0, &dbi))
        try Self.check(mdb_txn_commit(txn))
    }

    /// Sessions end (their transactions) before the environment closes.
    var sessions: [LMDBSession] = []

    public func makeSession() throws -> any EngineSession {
        let s = try LMDBSession(self)
        sessions.append(s)
        return s
    }

    public func close() throws {
        for s in sessions { try s.end() }
        sessions.removeAll()
        if configuration.sync == .none { try Self.check(mdb_env_sync(env, 1)) }
        mdb_env_close(env)
    }

    static func check(_ rc: Int32) throws {
        guard rc == 0 else { throw EngineError(name, String(cString: mdb_strerror(rc))) }
    }
}

final class LMDBSession: EngineSession {
    let e: LMDBEngine
    let batch: Int
    var writeTxn: OpaquePointer?
    var readTxn: OpaquePointer?
    var pending = 0

    init(_ e: LMDBEngine) throws {
        self.e = e
        batch = e.configuration.batch
        try LMDBEngine.check(mdb_txn_begin(e.env, nil, UInt32(MDB_RDONLY), &readTxn))
        mdb_txn_reset(readTxn)
    }

    /// Commits pending writes and releases the read transaction (called by the engine's close).
    func end() throws {
        try flush()
        if let readTxn { mdb_txn_abort(readTxn) }
        readTxn = nil
    }

    func writable() throws -> OpaquePointer {
        if let writeTxn { return writeTxn }
        var txn: OpaquePointer?
        try LMDBEngine.check(mdb_txn_begin(e.env, nil, 0, &txn))
        writeTxn = txn
        return txn!
    }

    func wrote() throws {
        pending += 1
        if pending >= batch { try flush() }
    }

    func put(_ key: String, _ value: UnsafeRawBufferPointer) throws {
        let txn = try writable()
        let rc = key.withKeyBytes { k -> Int32 in
            var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            var vv = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
            return mdb_put(txn, e.dbi, &kv, &vv, 0)
        }
        try LMDBEngine.check(rc)
        try wrote()
    }

    func get(_ key: String, into buffer: inout [UInt8]) throws -> Bool {
        let txn: OpaquePointer
        if let writeTxn { txn = writeTxn } else {
            try LMDBEngine.check(mdb_txn_renew(readTxn))
            txn = readTxn!
        }
        defer { if writeTxn == nil { mdb_txn_reset(readTxn) } }
        var vv = MDB_val()
        let rc = key.withKeyBytes { k -> Int32 in
            var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            return mdb_get(txn, e.dbi, &kv, &vv)
        }
        if rc == MDB_NOTFOUND { return false }
        try LMDBEngine.check(rc)
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: UnsafeRawBufferPointer(start: vv.mv_data, count: vv.mv_size))
        return true
    }

    func delete(_ key: String) throws {
        let txn = try writable()
        let rc = key.withKeyBytes { k -> Int32 in
            var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            return mdb_del(txn, e.dbi, &kv, nil)
        }
        if rc != MDB_NOTFOUND { try LMDBEngine.check(rc) }
        try wrote()
    }

    func flush() throws {
        guard let txn = writeTxn else { return }
        writeTxn = nil
        pending = 0
        try LMDBEngine.check(mdb_txn_commit(txn))
    }
}
