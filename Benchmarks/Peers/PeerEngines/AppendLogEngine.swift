#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The physical-limit line: the same record bytes Cask writes (a 40-byte header, the key, the
/// value; no checksum computed, no compression) appended to one file through a 1 MiB buffer
/// with `write(2)`, indexed by a Swift `Dictionary`; a get is one `pread`. It is not a store
/// (no recovery, no deletes on disk, no concurrency); it shows what the machine allows.
public final class AppendLogEngine: Engine, EngineSession {
    public static let name = "append"
    public static let configurationNote =
        "bare write(2) of header+key+value through a 1 MiB buffer, Dictionary index, pread per get; fdatasync when the sync mode asks"

    let fd: Int32
    let sync: SyncMode
    var buffer: [UInt8] = []
    /// Key -> the value's offset in the log and its size.
    var index: [String: (offset: Int, size: Int)] = [:]
    var flushed = 0
    var cadence: SyncCadence

    public init(directory: String, configuration: EngineConfiguration) throws {
        mkdir(directory, 0o755)
        fd = open(directory + "/log", O_RDWR | O_CREAT | O_APPEND, 0o644)
        guard fd >= 0 else { throw EngineError(Self.name, "open failed: errno \(errno)") }
        sync = configuration.sync
        cadence = SyncCadence(configuration.sync)
        buffer.reserveCapacity(1 << 20)
        try rebuildIndex()
    }

    /// Open: one sequential read of the log, a Dictionary insert per record (the last one wins).
    func rebuildIndex() throws {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw EngineError(Self.name, "fstat failed") }
        let size = Int(st.st_size)
        guard size > 0 else { return }
        var bytes = [UInt8](repeating: 0, count: size)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, size, 0) }
        guard n == size else { throw EngineError(Self.name, "read failed") }
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset + 40 <= size {
                let keyLength = Int(raw.loadUnaligned(fromByteOffset: offset + 30, as: UInt16.self))
                let valueLength = Int(raw.loadUnaligned(fromByteOffset: offset + 32, as: UInt32.self))
                let key = String(decoding: raw[(offset + 40)..<(offset + 40 + keyLength)], as: UTF8.self)
                index[key] = (offset + 40 + keyLength, valueLength)
                offset += 40 + keyLength + valueLength
            }
        }
        flushed = size
    }

    public func makeSession() throws -> any EngineSession { self }

    public func close() throws {
        try drain()
        if closeDescriptor(fd) != 0 { throw EngineError(Self.name, "close failed") }
    }

    func drain() throws {
        guard !buffer.isEmpty else { return }
        let n = buffer.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n == buffer.count else { throw EngineError(Self.name, "write failed: errno \(errno)") }
        flushed += n
        buffer.removeAll(keepingCapacity: true)
    }

    public func put(_ key: String, _ value: UnsafeRawBufferPointer) throws {
        // A 40-byte header (zeros but for the key and value lengths, where Cask keeps them), key, value.
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: 40))
        let keyLength = key.withKeyBytes { k in buffer.append(contentsOf: k); return k.count }
        buffer.withUnsafeMutableBytes { b in
            b.storeBytes(of: UInt16(keyLength), toByteOffset: start + 30, as: UInt16.self)
            b.storeBytes(of: UInt32(value.count), toByteOffset: start + 32, as: UInt32.self)
        }
        buffer.append(contentsOf: value)
        index[key] = (flushed + start + 40 + keyLength, value.count)
        try afterWrite()
    }

    public func get(_ key: String, into out: inout [UInt8]) throws -> Bool {
        guard let (offset, size) = index[key] else { return false }
        if offset >= flushed {
            let start = offset - flushed
            out.removeAll(keepingCapacity: true)
            out.append(contentsOf: buffer[start..<(start + size)])
            return true
        }
        if out.count != size { out = [UInt8](repeating: 0, count: size) }
        let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress, size, off_t(offset)) }
        guard n == size else { throw EngineError(Self.name, "pread failed") }
        return true
    }

    public func delete(_ key: String) throws {
        index[key] = nil
        try afterWrite()
    }

    public func flush() throws {
        try drain()
        if sync != .none { dataSync(fd) }
    }

    @inline(__always) func afterWrite() throws {
        if cadence.next() {
            try drain()
            dataSync(fd)
        } else if buffer.count >= 1 << 20 {
            try drain()
        }
    }
}

@inline(__always) func closeDescriptor(_ fd: Int32) -> Int32 { close(fd) }

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
