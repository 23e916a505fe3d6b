import CCaskSupport

/// CRC32C (Castagnoli) and LevelDB's checksum mask. See format-spec.md, "Checksums".
package enum CRC32C {
    /// The CRC32C of `bytes`, continuing from `crc` (0 to start).
    @inline(__always)
    package static func checksum(_ bytes: UnsafeRawBufferPointer, extending crc: UInt32 = 0) -> UInt32 {
        cask_crc32c_extend(crc, bytes.baseAddress, bytes.count)
    }

    /// Rotates and offsets a CRC so that data holding its own CRC does not validate trivially,
    /// and so that a run of zero bytes never carries a valid stored checksum of zero.
    @inline(__always)
    package static func mask(_ crc: UInt32) -> UInt32 {
        ((crc >> 15) | (crc << 17)) &+ 0xA282_EAD8
    }
}
