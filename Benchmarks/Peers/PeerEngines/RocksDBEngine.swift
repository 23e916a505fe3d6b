import CRocksDB

/// RocksDB through its C API (`rocksdb/c.h`, Debian librocksdb-dev), set up as its tuning guide
/// suggests for a small server: `IncreaseParallelism(2)` (two cores), `OptimizeLevelStyleCompaction`
/// with a 64 MiB memtable budget, a block-based table with a 10-bit Bloom filter and a 32 MiB
/// LRU block cache; default (Snappy/LZ4, as built) compression; WAL on. Gets use the pinned
/// (no-copy) API. Writes: `sync = false`, or `sync = true` per write / every 1,000th.
public final class RocksDBEngine: Engine, @unchecked Sendable {
    public static let name = "rocksdb"
    public static let configurationNote =
        "C API; IncreaseParallelism(2), OptimizeLevelStyleCompaction(64 MiB), bloom 10 bits/key, 32 MiB LRU block cache, WAL on; WriteOptions.sync false / true per write / true every 1,000th; get_pinned"

    let db: OpaquePointer
    let options: OpaquePointer
    let table: OpaquePointer
    let cache: OpaquePointer
    let readOptions: OpaquePointer
    let asyncWrite: OpaquePointer
    let syncWrite: OpaquePointer
    let sync: SyncMode

    public init(directory: String, configuration: EngineConfiguration) throws {
        options = rocksdb_options_create()
        rocksdb_options_increase_parallelism(options, 2)
        rocksdb_options_optimize_level_style_compaction(options, 64 << 20)
        rocksdb_options_set_create_if_missing(options, 1)
        table = rocksdb_block_based_options_create()
        rocksdb_block_based_options_set_filter_policy(table, rocksdb_filterpolicy_create_bloom(10))
        cache = rocksdb_cache_create_lru(32 << 20)
        rocksdb_block_based_options_set_block_cache(table, cache)
        rocksdb_options_set_block_based_table_factory(options, table)
        var error: UnsafeMutablePointer<CChar>?
        guard let handle = rocksdb_open(options, directory, &error) else {
            defer { rocksdb_free(error) }
            throw EngineError(Self.name, error.map { String(cString: $0) } ?? "open failed")
        }
        db = handle
        readOptions = rocksdb_readoptions_create()
        asyncWrite = rocksdb_writeoptions_create()
        syncWrite = rocksdb_writeoptions_create()
        rocksdb_writeoptions_set_sync(syncWrite, 1)
        sync = configuration.sync
    }

    public func makeSession() throws -> any EngineSession { RocksDBSession(self) }

    public func close() throws {
        rocksdb_close(db)
        rocksdb_options_destroy(options)
        rocksdb_block_based_options_destroy(table)
        rocksdb_cache_destroy(cache)
        rocksdb_readoptions_destroy(readOptions)
        rocksdb_writeoptions_destroy(asyncWrite)
        rocksdb_writeoptions_destroy(syncWrite)
    }
}

final class RocksDBSession: EngineSession {
    let e: RocksDBEngine
    var cadence: SyncCadence
    init(_ e: RocksDBEngine) {
        self.e = e
        cadence = SyncCadence(e.sync)
    }

    @inline(__always) func nextWriteOptions() -> OpaquePointer {
        cadence.next() ? e.syncWrite : e.asyncWrite
    }

    func put(_ key: String, _ value: UnsafeRawBufferPointer) throws {
        var error: UnsafeMutablePointer<CChar>?
        key.withKeyBytes { k in
            rocksdb_put(e.db, nextWriteOptions(), k.baseAddress, k.count, value.baseAddress, value.count, &error)
        }
        try check(error)
    }

    func get(_ key: String, into buffer: inout [UInt8]) throws -> Bool {
        var error: UnsafeMutablePointer<CChar>?
        let slice = key.withKeyBytes { k in rocksdb_get_pinned(e.db, e.readOptions, k.baseAddress, k.count, &error) }
        try check(error)
        guard let slice else { return false }
        defer { rocksdb_pinnableslice_destroy(slice) }
        var length = 0
        guard let value = rocksdb_pinnableslice_value(slice, &length) else { return false }
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: UnsafeRawBufferPointer(start: value, count: length))
        return true
    }

    func delete(_ key: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        key.withKeyBytes { k in rocksdb_delete(e.db, nextWriteOptions(), k.baseAddress, k.count, &error) }
        try check(error)
    }

    func flush() throws {}

    func check(_ error: UnsafeMutablePointer<CChar>?) throws {
        guard let error else { return }
        defer { rocksdb_free(error) }
        throw EngineError(RocksDBEngine.name, String(cString: error))
    }
}
