/// Little-endian loads and stores on raw buffers. Every multi-byte field on disk is little-endian.
extension UnsafeRawBufferPointer {
    @inline(__always) func u8(_ at: Int) -> UInt8 { self[at] }
    @inline(__always) func u16(_ at: Int) -> UInt16 { UInt16(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt16.self)) }
    @inline(__always) func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
    @inline(__always) func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
    @inline(__always) func i64(_ at: Int) -> Int64 { Int64(littleEndian: loadUnaligned(fromByteOffset: at, as: Int64.self)) }
}

extension UnsafeMutableRawBufferPointer {
    @inline(__always) func put(_ v: UInt8, at: Int) { self[at] = v }
    @inline(__always) func put(_ v: UInt16, at: Int) { storeBytes(of: v.littleEndian, toByteOffset: at, as: UInt16.self) }
    @inline(__always) func put(_ v: UInt32, at: Int) { storeBytes(of: v.littleEndian, toByteOffset: at, as: UInt32.self) }
    @inline(__always) func put(_ v: UInt64, at: Int) { storeBytes(of: v.littleEndian, toByteOffset: at, as: UInt64.self) }
    @inline(__always) func put(_ v: Int64, at: Int) { storeBytes(of: v.littleEndian, toByteOffset: at, as: Int64.self) }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for bodies that throw ``CaskError`` (the standard one rethrows `any Error`).
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(CaskError) -> R) throws(CaskError) -> R {
        let result: Result<R, CaskError> = withUnsafeBytes { raw in Result { () throws(CaskError) in try body(raw) } }
        return try result.get()
    }

    /// `withUnsafeMutableBytes` for bodies that throw ``CaskError``.
    @inline(__always)
    mutating func withMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws(CaskError) -> R) throws(CaskError) -> R {
        let result: Result<R, CaskError> = withUnsafeMutableBytes { raw in Result { () throws(CaskError) in try body(raw) } }
        return try result.get()
    }
}
