#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// ``KeyIndex``'s key bytes: every entry's key at its offset, in chunks of 256 KiB
/// (``ChunkedArray``), so that adding keys never copies the arena. A key never straddles two
/// chunks: a key that does not fit in what is left of the current chunk starts the next one,
/// and the bytes skipped count as padding (reported with the removed keys' bytes as garbage).
/// Offsets are 32-bit. Not thread-safe.
struct KeyArena: Sendable {
    static let chunkShift = 18
    private var bytes = ChunkedArray<UInt8>(chunkShift: KeyArena.chunkShift)

    init() {}

    /// An arena of `bytes` (the keys one after the other, as a snapshot saves them) in one
    /// first chunk.
    init(_ bytes: ChunkedArray<UInt8>) {
        self.bytes = bytes
    }

    /// Bytes used, padding and removed keys' bytes included.
    var count: Int { bytes.count }

    /// Bytes of memory the arena holds, for statistics.
    var memoryBytes: Int { bytes.memoryBytes }

    /// Frees the chunks past the last key's.
    mutating func releaseSpareChunks() { bytes.releaseSpareChunks() }

    /// Appends `key`, returning its offset and the padding bytes skipped to keep it in one chunk.
    mutating func append(_ key: UnsafeRawBufferPointer) -> (offset: UInt32, padding: Int) {
        var padding = 0
        if key.count > bytes.roomInLastChunk {
            padding = bytes.roomInLastChunk
            bytes.append(repeating: 0, count: padding)
        }
        let offset = bytes.count
        bytes.append(contentsOf: key.assumingMemoryBound(to: UInt8.self))
        return (UInt32(offset), padding)
    }

    /// Writes `key` over the bytes at `offset` (a removed key's place of the same length).
    mutating func overwrite(at offset: UInt32, with key: UnsafeRawBufferPointer) {
        guard key.count > 0 else { return }
        bytes.withUnsafeMutableBufferPointer(in: Int(offset)..<(Int(offset) + key.count)) { place in
            UnsafeMutableRawBufferPointer(place).copyMemory(from: key)
        }
    }

    /// Runs `body` with the `length` key bytes at `offset`.
    @inline(__always)
    func withKey<R>(at offset: UInt32, length: UInt16, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard length > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try bytes.withUnsafeBufferPointer(in: Int(offset)..<(Int(offset) + Int(length))) { try body(UnsafeRawBufferPointer($0)) }
    }

    /// Whether the `key.count` bytes at `offset` are `key`.
    @inline(__always)
    func holds(_ key: UnsafeRawBufferPointer, at offset: UInt32) -> Bool {
        guard key.count > 0 else { return true }
        return bytes.withUnsafeBufferPointer(in: Int(offset)..<(Int(offset) + key.count)) {
            memcmp($0.baseAddress!, key.baseAddress!, key.count) == 0
        }
    }
}
