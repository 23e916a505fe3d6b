/// The content of a store's `LOCK` file (format-spec.md, "Lock file"): the owner's process id in
/// decimal and a newline, padded with spaces to 32 bytes, then the deletion generation, a
/// little-endian 64-bit count that is odd while the owner is deleting segments.
package enum LockFileContent {
    /// Bytes 0..<32: the pid line; bytes 32..<40: the generation.
    package static let generationOffset = 32
    package static let size = 40

    package static func encode(pid: Int32, generation: UInt64) -> [UInt8] {
        var bytes = Array("\(pid)\n".utf8.prefix(generationOffset))
        bytes += [UInt8](repeating: 0x20, count: generationOffset - bytes.count)
        withUnsafeBytes(of: generation.littleEndian) { bytes += $0 }
        return bytes
    }

    /// The generation in `bytes` (the file's first bytes), or nil when the file is shorter: no
    /// owner since it was created, or one written by a version that kept only the pid.
    package static func generation(in bytes: UnsafeRawBufferPointer) -> UInt64? {
        guard bytes.count >= size else { return nil }
        return bytes.u64(generationOffset)
    }
}
