import CCaskSupport

/// CRC32C (Castagnoli) and LevelDB's checksum mask. See format-spec.md, "Checksums".
package enum CRC32C {
    /// The CRC32C of `bytes`, continuing from `crc` (0 to start).
    @inline(__always)
    package static func checksum(_ bytes: UnsafeRawBufferPointer, extending crc: UInt32 = 0) -> UInt32 {
        cask_crc32c_extend(crc, bytes.baseAddress, bytes.count)
    }

    /// The CRC32C of A followed by B, from A's (`first`), B's alone (`second`) and B's length.
    package static func combine(_ first: UInt32, _ second: UInt32, secondLength: Int) -> UInt32 {
        cask_crc32c_combine(first, second, UInt64(secondLength))
    }

    /// Rotates and offsets a CRC so that data holding its own CRC does not validate trivially,
    /// and so that a run of zero bytes never carries a valid stored checksum of zero.
    @inline(__always)
    package static func mask(_ crc: UInt32) -> UInt32 {
        ((crc >> 15) | (crc << 17)) &+ 0xA282_EAD8
    }
}
