import CLZ4

/// LZ4 block compression through the system liblz4.
package enum LZ4 {
    /// The largest output `compress` can produce for `count` input bytes.
    package static func bound(_ count: Int) -> Int { Int(LZ4_compressBound(Int32(count))) }

    /// Compresses `source` into `destination`; returns the compressed size, or 0 when it did not fit.
    package static func compress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int {
        guard source.count > 0, source.count <= Format.maximumValueLength else { return 0 }
        let n = LZ4_compress_default(
            source.baseAddress!.assumingMemoryBound(to: CChar.self),
            destination.baseAddress!.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(destination.count))
        return Int(max(n, 0))
    }

    /// Decompresses `source` into `destination`. True only when the input is a well-formed block
    /// that produces exactly `destination.count` bytes; malformed input never reads or writes out
    /// of bounds (LZ4_decompress_safe).
    package static func decompress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Bool {
        guard source.count > 0, destination.count > 0 else { return false }
        let n = LZ4_decompress_safe(
            source.baseAddress!.assumingMemoryBound(to: CChar.self),
            destination.baseAddress!.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(destination.count))
        return Int(n) == destination.count
    }
}
