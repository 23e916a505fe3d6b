#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CaskBaselines

/// The physical-limit line: ``AppendLog`` (the same record bytes Cask writes, appended through
/// a 1 MiB buffer with `write(2)`, a `Dictionary` keyed by a 16-byte inline key, one `pread` per
/// get), plus `fdatasync` when the sync mode asks. It is not a store (no recovery, no deletes on
/// disk, no concurrency); it shows what the machine allows.
public final class AppendLogEngine: Engine, EngineSession {
    public static let name = "append"
    public static let configurationNote =
        "bare write(2) of header+key+value through a 1 MiB buffer, Dictionary keyed by a 16-byte inline key, pread per get; fdatasync when the sync mode asks"

    let log: AppendLog
    let sync: SyncMode
    var cadence: SyncCadence
    public init(directory: String, configuration: EngineConfiguration) throws {
        mkdir(directory, 0o755)
        do { log = try AppendLog(path: directory + "/log") } catch { throw EngineError(Self.name, "\(error)") }
        sync = configuration.sync
        cadence = SyncCadence(configuration.sync)
    }

    public func makeSession() throws -> any EngineSession { self }

    public func close() throws {
        try drain()
    }

    func drain() throws {
        do { try log.drain() } catch { throw EngineError(Self.name, "\(error)") }
    }

    public func put(_ key: String, _ value: UnsafeRawBufferPointer) throws {
        do { try log.put(key, value) } catch { throw EngineError(Self.name, "\(error)") }
        try afterWrite()
    }

    public func get(_ key: String, into out: inout [UInt8]) throws -> Bool {
        do { return try log.get(key, into: &out) } catch { throw EngineError(Self.name, "\(error)") }
    }

    public func delete(_ key: String) throws {
        log.delete(key)
        try afterWrite()
    }

    public func flush() throws {
        try drain()
        if sync != .none { dataSync(log.descriptor) }
    }

    @inline(__always) func afterWrite() throws {
        if cadence.next() {
            try drain()
            dataSync(log.descriptor)
        }
    }
}

/// fdatasync on Linux; F_FULLFSYNC on Darwin.
@inline(__always) func dataSync(_ fd: Int32) {
    #if canImport(Darwin)
    _ = fcntl(fd, F_FULLFSYNC)
    #else
    _ = fdatasync(fd)
    #endif
}

/// Creates `path` when it does not exist.
func mkdirIfMissing(_ path: String) { _ = mkdir(path, 0o755) }
