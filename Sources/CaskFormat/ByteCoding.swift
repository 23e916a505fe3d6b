/// Little-endian loads and stores on raw buffers. Every multi-byte field on disk is little-endian.
extension UnsafeRawBufferPointer {
    @inlinable @inline(__always) package func u8(_ at: Int) -> UInt8 { self[at] }
    @inlinable @inline(__always) package func u16(_ at: Int) -> UInt16 { UInt16(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt16.self)) }
    @inlinable @inline(__always) package func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
    @inlinable @inline(__always) package func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
    @inlinable @inline(__always) package func i64(_ at: Int) -> Int64 { Int64(littleEndian: loadUnaligned(fromByteOffset: at, as: Int64.self)) }
}

extension UnsafeMutableRawBufferPointer {
    @inlinable @inline(__always) package func put(_ v: UInt8, at: Int) { self[at] = v }
    @inlinable @inline(__always) package func put(_ v: UInt16, at: Int) { storeBytes(of: v.littleEndian, toByteOffset: at, as: UInt16.self) }
    @inlinable @inline(__always) package func put(_ v: UInt32, at: Int) { storeBytes(of: v.littleEndian, toByteOffset: at, as: UInt32.self) }
    @inlinable @inline(__always) package func put(_ v: UInt64, at: Int) { storeBytes(of: v.littleEndian, toByteOffset: at, as: UInt64.self) }
    @inlinable @inline(__always) package func put(_ v: Int64, at: Int) { storeBytes(of: v.littleEndian, toByteOffset: at, as: Int64.self) }
}

extension Array where Element == UInt8 {
    /// Appends `bytes` with one copy (`append(contentsOf:)` given the raw buffer itself walks it
    /// byte by byte: about 7 instructions a byte, measured with callgrind).
    @inlinable @inline(__always)
    package mutating func appendBytes(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        append(contentsOf: UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: bytes.count))
    }

    /// `withUnsafeBytes` for bodies with a typed throw (the standard one rethrows `any Error`).
    @inlinable @inline(__always)
    package func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { raw in Result { () throws(E) in try body(raw) } }
        return try result.get()
    }

    /// `withUnsafeMutableBytes` for bodies with a typed throw.
    @inlinable @inline(__always)
    package mutating func withMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeMutableBytes { raw in Result { () throws(E) in try body(raw) } }
        return try result.get()
    }
}
