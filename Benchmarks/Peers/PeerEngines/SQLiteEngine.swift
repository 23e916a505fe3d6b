import CSQLite

/// SQLite through its C API (Debian libsqlite3-dev), as its documentation recommends for a
/// key-value workload: one `WITHOUT ROWID` table with a BLOB primary key, WAL journal,
/// prepared statements, writes batched 1,000 per transaction with `synchronous = NORMAL` (no
/// fsync on commit in WAL mode) when the workload does not sync; `synchronous = FULL` with a
/// commit per write or per 1,000 writes in the durable modes; 256 MiB memory-mapped reads; one
/// connection per thread (`SQLITE_OPEN_NOMUTEX`), a 10 s busy timeout.
public final class SQLiteEngine: Engine {
    public static let name = "sqlite"
    public static let configurationNote =
        "WAL, WITHOUT ROWID table, prepared statements, 1,000 writes per transaction and synchronous=NORMAL (sync none) / synchronous=FULL with a commit per write or per 1,000; mmap_size 256 MiB; a connection per thread; autocommit when 2 threads write"

    let path: String
    let configuration: EngineConfiguration
    var sessions: [SQLiteSession] = []

    public init(directory: String, configuration: EngineConfiguration) throws {
        mkdirIfMissing(directory)
        path = directory + "/kv.sqlite"
        self.configuration = configuration
        let first = try SQLiteSession(path: path, configuration: configuration, setUp: true)
        sessions.append(first)
    }

    public func makeSession() throws -> any EngineSession {
        if sessions.count == 1, !sessions[0].handedOut {
            sessions[0].handedOut = true
            return sessions[0]
        }
        let s = try SQLiteSession(path: path, configuration: configuration, setUp: false)
        s.handedOut = true
        sessions.append(s)
        return s
    }

    public func close() throws {
        for s in sessions { try s.close() }
        sessions.removeAll()
    }
}

final class SQLiteSession: EngineSession {
    var db: OpaquePointer?
    var insert: OpaquePointer?
    var select: OpaquePointer?
    var remove: OpaquePointer?
    let batch: Int
    var pending = 0
    var handedOut = false

    init(path: String, configuration: EngineConfiguration, setUp: Bool) throws {
        batch = configuration.batch
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            throw EngineError(SQLiteEngine.name, "open \(path) failed")
        }
        sqlite3_busy_timeout(db, 10_000)
        let synchronous = configuration.sync == .none ? "NORMAL" : "FULL"
        try exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = \(synchronous); PRAGMA mmap_size = 268435456;")
        if setUp { try exec("CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;") }
        insert = try prepare("INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)")
        select = try prepare("SELECT v FROM kv WHERE k = ?1")
        remove = try prepare("DELETE FROM kv WHERE k = ?1")
    }

    func close() throws {
        if db == nil { return }
        try flush()
        sqlite3_finalize(insert); sqlite3_finalize(select); sqlite3_finalize(remove)
        guard sqlite3_close(db) == SQLITE_OK else { throw EngineError(SQLiteEngine.name, "close failed") }
        db = nil
    }

    deinit { try? close() }

    func exec(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, sql, nil, nil, &message) == SQLITE_OK else {
            defer { sqlite3_free(message) }
            throw EngineError(SQLiteEngine.name, message.map { String(cString: $0) } ?? sql)
        }
    }

    func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK else {
            throw EngineError(SQLiteEngine.name, String(cString: sqlite3_errmsg(db)))
        }
        return statement
    }

    func beginWrite() throws {
        if batch > 1 && pending == 0 { try exec("BEGIN") }
    }

    func wrote() throws {
        guard batch > 1 else { return }
        pending += 1
        if pending >= batch { try flush() }
    }

    func step(_ statement: OpaquePointer?) throws -> Int32 {
        let rc = sqlite3_step(statement)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else {
            sqlite3_reset(statement)
            throw EngineError(SQLiteEngine.name, String(cString: sqlite3_errmsg(db)))
        }
        return rc
    }

    func put(_ key: String, _ value: UnsafeRawBufferPointer) throws {
        try beginWrite()
        try key.withKeyBytes { k in
            sqlite3_bind_blob(insert, 1, k.baseAddress, Int32(k.count), nil)
            sqlite3_bind_blob(insert, 2, value.baseAddress, Int32(value.count), nil)
            _ = try step(insert)
        }
        sqlite3_reset(insert)
        try wrote()
    }

    func get(_ key: String, into buffer: inout [UInt8]) throws -> Bool {
        defer { sqlite3_reset(select) }
        let rc = try key.withKeyBytes { k in
            sqlite3_bind_blob(select, 1, k.baseAddress, Int32(k.count), nil)
            return try step(select)
        }
        guard rc == SQLITE_ROW else { return false }
        let count = Int(sqlite3_column_bytes(select, 0))
        buffer.removeAll(keepingCapacity: true)
        if let bytes = sqlite3_column_blob(select, 0) { buffer.append(contentsOf: UnsafeRawBufferPointer(start: bytes, count: count)) }
        return true
    }

    func delete(_ key: String) throws {
        try beginWrite()
        try key.withKeyBytes { k in
            sqlite3_bind_blob(remove, 1, k.baseAddress, Int32(k.count), nil)
            _ = try step(remove)
        }
        sqlite3_reset(remove)
        try wrote()
    }

    func flush() throws {
        guard pending > 0 else { return }
        pending = 0
        try exec("COMMIT")
    }
}
