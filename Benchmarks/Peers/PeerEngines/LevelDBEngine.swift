import CLevelDB

/// LevelDB through its C API (`leveldb/c.h`, Debian libleveldb-dev), configured as its
/// documentation recommends for random reads: a 10-bit-per-key Bloom filter and an 8 MiB LRU
/// block cache (the default size, made explicit); 4 MiB write buffer; Snappy compression (default).
/// Writes use `sync = false`, or `sync = true` for every write / every 1,000th (a synced write
/// makes all earlier ones durable too).
public final class LevelDBEngine: Engine, @unchecked Sendable {
    public static let name = "leveldb"
    public static let configurationNote =
        "C API; bloom filter 10 bits/key, 8 MiB LRU block cache, 4 MiB write buffer, snappy; WriteOptions.sync false / true per write / true every 1,000th"

    let db: OpaquePointer
    let options: OpaquePointer
    let filter: OpaquePointer
    let cache: OpaquePointer
    let readOptions: OpaquePointer
    let asyncWrite: OpaquePointer
    let syncWrite: OpaquePointer
    let sync: SyncMode

    public init(directory: String, configuration: EngineConfiguration) throws {
        options = leveldb_options_create()
        filter = leveldb_filterpolicy_create_bloom(10)
        cache = leveldb_cache_create_lru(8 << 20)
        leveldb_options_set_create_if_missing(options, 1)
        leveldb_options_set_filter_policy(options, filter)
        leveldb_options_set_cache(options, cache)
        leveldb_options_set_write_buffer_size(options, 4 << 20)
        leveldb_options_set_max_open_files(options, 1000)
        var error: UnsafeMutablePointer<CChar>?
        guard let handle = leveldb_open(options, directory, &error) else {
            defer { leveldb_free(error) }
            throw EngineError(Self.name, error.map { String(cString: $0) } ?? "open failed")
        }
        db = handle
        readOptions = leveldb_readoptions_create()
        asyncWrite = leveldb_writeoptions_create()
        syncWrite = leveldb_writeoptions_create()
        leveldb_writeoptions_set_sync(syncWrite, 1)
        sync = configuration.sync
    }

    public func makeSession() throws -> any EngineSession { LevelDBSession(self) }

    public func close() throws {
        leveldb_close(db)
        leveldb_options_destroy(options)
        leveldb_filterpolicy_destroy(filter)
        leveldb_cache_destroy(cache)
        leveldb_readoptions_destroy(readOptions)
        leveldb_writeoptions_destroy(asyncWrite)
        leveldb_writeoptions_destroy(syncWrite)
    }
}

final class LevelDBSession: EngineSession {
    let e: LevelDBEngine
    var cadence: SyncCadence
    init(_ e: LevelDBEngine) {
        self.e = e
        cadence = SyncCadence(e.sync)
    }

    @inline(__always) func nextWriteOptions() -> OpaquePointer {
        cadence.next() ? e.syncWrite : e.asyncWrite
    }

    func put(_ key: String, _ value: UnsafeRawBufferPointer) throws {
        var error: UnsafeMutablePointer<CChar>?
        key.withKeyBytes { k in
            leveldb_put(e.db, nextWriteOptions(), k.baseAddress, k.count, value.baseAddress, value.count, &error)
        }
        try check(error)
    }

    func get(_ key: String, into buffer: inout [UInt8]) throws -> Bool {
        var error: UnsafeMutablePointer<CChar>?
        var length = 0
        let found = key.withKeyBytes { k in leveldb_get(e.db, e.readOptions, k.baseAddress, k.count, &length, &error) }
        try check(error)
        guard let found else { return false }
        defer { leveldb_free(found) }
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: UnsafeRawBufferPointer(start: found, count: length))
        return true
    }

    func delete(_ key: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        key.withKeyBytes { k in leveldb_delete(e.db, nextWriteOptions(), k.baseAddress, k.count, &error) }
        try check(error)
    }

    func flush() throws {}

    func check(_ error: UnsafeMutablePointer<CChar>?) throws {
        guard let error else { return }
        defer { leveldb_free(error) }
        throw EngineError(LevelDBEngine.name, String(cString: error))
    }
}
