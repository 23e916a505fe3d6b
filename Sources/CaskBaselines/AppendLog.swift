#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A key of up to 16 bytes held inline (two words, zero-padded): the fastest simple `Dictionary`
/// key for the benchmarks' 16-byte keys (no heap string, no UTF-8 walk when hashing).
public struct InlineKey: Hashable, Sendable {
    public var low: UInt64
    public var high: UInt64

    /// The first 16 bytes of `bytes` (the benchmarks' keys are 16 bytes; longer keys are folded
    /// in, which a real store could not do but a baseline for 16-byte keys never needs).
    @inlinable
    public init(bytes: UnsafeRawBufferPointer) {
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { out in
            out.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.prefix(16)))
        }
        var high = words.1
        if bytes.count > 16 { for (i, b) in bytes.dropFirst(16).enumerated() { high ^= UInt64(b) << (UInt64(i % 8) * 8) } }
        self.low = words.0
        self.high = high
    }

    @inlinable
    public init(_ key: String) {
        var key = key
        self = key.withUTF8 { InlineKey(bytes: UnsafeRawBufferPointer($0)) }
    }
}

/// The physical-limit line for the write path: the same record bytes Cask writes (a 40-byte
/// header, the key, the value; no checksum computed, no compression) appended to one file
/// through a 1 MiB buffer with `write(2)`, indexed by a `Dictionary` keyed by ``InlineKey``; a
/// get is one `pread` (or a copy from the buffer). Not a store: no recovery, no deletes on disk,
/// no concurrency. Used by `cask-harness bench` and the `append` engine of `Benchmarks/Peers`.
public final class AppendLog {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let descriptor: Int32
    /// Key -> the value's offset in the log and its size.
    public private(set) var index: [InlineKey: (offset: Int, size: Int)] = [:]
    private var buffer: [UInt8] = []
    /// Bytes of the log handed to `write(2)`.
    public private(set) var flushed = 0

    /// Opens (or creates) the log file at `path` and indexes what it holds.
    public init(path: String) throws {
        descriptor = open(path, O_RDWR | O_CREAT | O_APPEND, 0o644)
        guard descriptor >= 0 else { throw Failure(description: "open \(path) failed: errno \(errno)") }
        buffer.reserveCapacity(1 << 20)
        try rebuildIndex()
    }

    deinit { close(descriptor) }

    /// Reads the log once and inserts each record (the last one of a key wins).
    private func rebuildIndex() throws {
        var st = stat()
        guard fstat(descriptor, &st) == 0 else { throw Failure(description: "fstat failed: errno \(errno)") }
        let size = Int(st.st_size)
        guard size > 0 else { return }
        var bytes = [UInt8](repeating: 0, count: size)
        let n = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, size, 0) }
        guard n == size else { throw Failure(description: "read failed: errno \(errno)") }
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset + 40 <= size {
                let keyLength = Int(raw.loadUnaligned(fromByteOffset: offset + 30, as: UInt16.self))
                let valueLength = Int(raw.loadUnaligned(fromByteOffset: offset + 32, as: UInt32.self))
                let key = InlineKey(bytes: UnsafeRawBufferPointer(rebasing: raw[(offset + 40)..<(offset + 40 + keyLength)]))
                index[key] = (offset + 40 + keyLength, valueLength)
                offset += 40 + keyLength + valueLength
            }
        }
        flushed = size
    }

    /// Appends a record (header with the key and value lengths where Cask keeps them, key,
    /// value) to the buffer, writing the buffer out when it reaches 1 MiB.
    @inlinable
    public func put(_ key: String, _ value: UnsafeRawBufferPointer) throws {
        var key = key
        try key.withUTF8 { try put(UnsafeRawBufferPointer($0), value) }
    }

    public func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws {
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: 40))
        buffer.append(contentsOf: key.assumingMemoryBound(to: UInt8.self))
        buffer.withUnsafeMutableBytes { b in
            b.storeBytes(of: UInt16(key.count), toByteOffset: start + 30, as: UInt16.self)
            b.storeBytes(of: UInt32(value.count), toByteOffset: start + 32, as: UInt32.self)
        }
        buffer.append(contentsOf: value.assumingMemoryBound(to: UInt8.self))
        index[InlineKey(bytes: key)] = (flushed + start + 40 + key.count, value.count)
        if buffer.count >= 1 << 20 { try drain() }
    }

    /// Copies the value of `key` into `out`; false when absent.
    public func get(_ key: String, into out: inout [UInt8]) throws -> Bool {
        guard let (offset, size) = index[InlineKey(key)] else { return false }
        if offset >= flushed {
            let start = offset - flushed
            out.removeAll(keepingCapacity: true)
            out.append(contentsOf: buffer[start..<(start + size)])
            return true
        }
        if out.count != size { out = [UInt8](repeating: 0, count: size) }
        let n = out.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, size, off_t(offset)) }
        guard n == size else { throw Failure(description: "pread failed: errno \(errno)") }
        return true
    }

    /// Forgets `key` (nothing is written).
    public func delete(_ key: String) { index[InlineKey(key)] = nil }

    /// Hands the buffer to the OS.
    public func drain() throws {
        guard !buffer.isEmpty else { return }
        let n = buffer.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard n == buffer.count else { throw Failure(description: "write failed: errno \(errno)") }
        flushed += n
        buffer.removeAll(keepingCapacity: true)
    }
}
